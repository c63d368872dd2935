//! `--set path=value` overrides. The configuration is turned into a JSON value tree, the
//! leaf named by the dotted path is replaced, and the tree is deserialised again, so every
//! field of every section can be overridden and type errors are caught by serde.
//!
//! Enum variants are transparent in paths: `topology.k` reaches the `k` of
//! `Torus(k: 8, n: 2)` and `switching.routing` the routing of `Wormhole(...)`. Values are
//! numbers, booleans, `None` or `Some(value)` (or the bare value) for options, unit
//! variants (`Random`), variants with data (`Exponential(mean: 24)`, `Messages(5000)`,
//! nested: `Wormhole(routing: Adaptive, selection: Random)`), tuples (`(0, 3)`), lists
//! (`[1, 2]`), or strings.

use crate::config::HwConfig;
use crate::foundation::error::{Error, Result};
use serde_json::{Map, Value};

/// Applies `path=value` overrides in order and returns the new configuration.
pub fn apply_overrides(cfg: &HwConfig, sets: &[String]) -> Result<HwConfig> {
    apply_overrides_as(cfg, sets, "--set")
}

/// [`apply_overrides`] for overrides the user typed with another flag (a sweep's
/// `--param`): every error names `flag`, the one on the command line.
pub fn apply_overrides_as(cfg: &HwConfig, sets: &[String], flag: &str) -> Result<HwConfig> {
    if sets.is_empty() {
        return Ok(cfg.clone());
    }
    let mut tree = serde_json::to_value(cfg).map_err(|e| Error::config(e.to_string()))?;
    for set in sets {
        let (path, raw) = set
            .split_once('=')
            .ok_or_else(|| Error::Arg(format!("{flag} {set}: expected path=value")))?;
        let path = path.trim();
        let value = parse_value(raw.trim())
            .map_err(|e| Error::Arg(format!("{flag} {set}: cannot read value: {e}")))?;
        let slot = locate(&mut tree, path).ok_or_else(|| {
            let valid = leaf_paths(&serde_json::to_value(cfg).unwrap_or(Value::Null));
            let close =
                crate::foundation::error::close_matches(path, valid.iter().map(String::as_str));
            let hint = if close.is_empty() {
                String::new()
            } else {
                format!(" (did you mean {}?)", close.join(", "))
            };
            Error::Arg(format!(
                "{flag} {set}: unknown field `{path}`{hint}; valid paths are: {}",
                valid.join(", ")
            ))
        })?;
        *slot = value;
        // Deserialise after each override so an error names the override that caused it.
        serde_json::from_value::<HwConfig>(tree.clone())
            .map_err(|e| Error::Arg(format!("{flag} {set}: {e}")))?;
    }
    serde_json::from_value(tree).map_err(|e| Error::Arg(e.to_string()))
}

/// Finds the value at a dotted path, looking through enum variants.
fn locate<'a>(tree: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut cur = tree;
    for seg in path.split('.') {
        cur = step(cur, seg)?;
    }
    Some(cur)
}

fn step<'a>(v: &'a mut Value, seg: &str) -> Option<&'a mut Value> {
    let obj = v.as_object_mut()?;
    if obj.contains_key(seg) {
        return obj.get_mut(seg);
    }
    let variant = single_variant_key(obj)?;
    step(obj.get_mut(&variant)?, seg)
}

/// The key of an externally tagged enum variant with data (`{"Torus": {...}}`).
fn single_variant_key(obj: &Map<String, Value>) -> Option<String> {
    if obj.len() != 1 {
        return None;
    }
    let (k, inner) = obj.iter().next()?;
    (k.starts_with(|c: char| c.is_ascii_uppercase()) && inner.is_object()).then(|| k.clone())
}

/// Every settable dotted path of a configuration tree, in order.
pub fn leaf_paths(tree: &Value) -> Vec<String> {
    let mut out = Vec::new();
    collect(tree, "", &mut out);
    out
}

fn collect(v: &Value, prefix: &str, out: &mut Vec<String>) {
    match v.as_object() {
        Some(obj) if single_variant_key(obj).is_some() => {
            // Transparent variant: its fields are addressed directly, and the field
            // holding the enum can also be replaced as a whole.
            if !prefix.is_empty() {
                out.push(prefix.to_string());
            }
            let (_, inner) = obj.iter().next().expect("one key");
            collect_fields(inner.as_object().expect("object"), prefix, out);
        }
        Some(obj) => collect_fields(obj, prefix, out),
        None => out.push(prefix.to_string()),
    }
}

fn collect_fields(obj: &Map<String, Value>, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in obj {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        collect(v, &path, out);
    }
}

/// Reads an override value.
fn parse_value(raw: &str) -> std::result::Result<Value, String> {
    if raw.is_empty() {
        return Err("empty value".into());
    }
    match raw {
        "true" => return Ok(Value::Bool(true)),
        "false" => return Ok(Value::Bool(false)),
        "None" | "none" | "null" => return Ok(Value::Null),
        _ => {}
    }
    if let Ok(i) = raw.parse::<u64>() {
        return Ok(Value::from(i));
    }
    if let Ok(i) = raw.parse::<i64>() {
        return Ok(Value::from(i));
    }
    if let Ok(f) = raw.parse::<f64>() {
        return serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| format!("`{raw}` is not a finite number"));
    }
    if let Some(s) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return Ok(Value::String(s.to_string()));
    }
    if let Some(inner) = raw.strip_prefix("Some(").and_then(|r| r.strip_suffix(')')) {
        // An option's value is written the way RON files write it; in the tree (JSON) a
        // present option is the bare value.
        return parse_value(inner.trim());
    }
    if let Some(body) = raw.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        // An unnamed struct, `(length: Constant(flits: 5))` (an `Option`'s struct, as
        // `workload.reply`'s): its named fields.
        if top_level_items(body)?
            .iter()
            .all(|i| top_level_colon(i).is_some())
        {
            return variant_body(body);
        }
        return top_level_items(body)?
            .into_iter()
            .map(parse_value)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    if let Some(body) = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        if body.trim().is_empty() {
            return Ok(Value::Array(Vec::new()));
        }
        return top_level_items(body)?
            .into_iter()
            .map(parse_value)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    if raw.starts_with(|c: char| c.is_ascii_uppercase()) {
        if let Some(open) = raw.find('(') {
            let name = &raw[..open];
            let body = raw[open..]
                .strip_prefix('(')
                .and_then(|b| b.strip_suffix(')'))
                .ok_or_else(|| format!("unbalanced parentheses in `{raw}`"))?;
            let mut m = Map::new();
            m.insert(name.trim().to_string(), variant_body(body)?);
            return Ok(Value::Object(m));
        }
    }
    Ok(Value::String(raw.to_string()))
}

/// The data of a variant `Name(body)`: named fields (`a: 1, b: Uniform(min: 2, max:
/// 3)`, each value read by [`parse_value`], so variants nest), or one value
/// (`Messages(5000)`), or several (a tuple variant).
fn variant_body(body: &str) -> std::result::Result<Value, String> {
    let items = top_level_items(body)?;
    let fields: Vec<Option<(&str, &str)>> = items.iter().map(|i| top_level_colon(i)).collect();
    if fields.iter().all(Option::is_some) {
        let mut m = Map::new();
        for (k, v) in fields.into_iter().flatten() {
            // The RON loader refuses a field given twice; so does --set, rather than
            // keeping the last one silently.
            if m.insert(k.trim().to_string(), parse_value(v.trim())?)
                .is_some()
            {
                return Err(format!("the field `{}` is given twice", k.trim()));
            }
        }
        return Ok(Value::Object(m));
    }
    match items[..] {
        [one] => parse_value(one.trim()),
        _ => items
            .into_iter()
            .map(parse_value)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map(Value::Array),
    }
}

/// Splits `key: value` at its first colon outside brackets and quotes.
fn top_level_colon(item: &str) -> Option<(&str, &str)> {
    let (mut depth, mut quoted) = (0i32, false);
    for (i, c) in item.char_indices() {
        match c {
            '"' => quoted = !quoted,
            _ if quoted => {}
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ':' if depth == 0 => {
                let key = item[..i].trim();
                // A key is an identifier; anything else (a quoted string) is a value.
                return key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
                    .then_some((key, &item[i + 1..]));
            }
            _ => {}
        }
    }
    None
}

/// The comma-separated items of a tuple's, list's or variant's body, commas inside
/// brackets and quotes kept.
fn top_level_items(body: &str) -> std::result::Result<Vec<&str>, String> {
    let (mut depth, mut from, mut quoted, mut items) = (0i32, 0, false, Vec::new());
    for (i, c) in body.char_indices() {
        match c {
            '"' => quoted = !quoted,
            _ if quoted => {}
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => {
                return Err(format!("unbalanced brackets in `({body})`"))
            }
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(body[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 || quoted {
        return Err(format!("unbalanced brackets or quotes in `({body})`"));
    }
    let last = body[from..].trim();
    // A trailing comma, as RON allows.
    if !last.is_empty() || items.is_empty() {
        items.push(last);
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load::parse_hw;
    use crate::config::{LengthConfig, Measure, Selection, SwitchingConfig, TopologyConfig};

    fn torus() -> HwConfig {
        parse_hw(
            "(topology: Torus(k: 8, n: 2), switching: Wormhole(routing: Adaptive))",
            "t",
        )
        .unwrap()
    }

    fn set(cfg: &HwConfig, s: &str) -> Result<HwConfig> {
        apply_overrides(cfg, &[s.to_string()])
    }

    #[test]
    fn sets_fields_inside_enum_variants() {
        let c = set(&torus(), "topology.k=16").unwrap();
        assert!(matches!(
            c.topology,
            TopologyConfig::Torus { k: 16, n: 2, .. }
        ));
        let c = set(&c, "switching.selection=Random").unwrap();
        assert!(matches!(
            c.switching,
            SwitchingConfig::Wormhole {
                selection: Selection::Random,
                ..
            }
        ));
    }

    #[test]
    fn sets_options_and_nested_sections() {
        let c = set(&torus(), "router.dma=2").unwrap();
        assert_eq!(c.router.dma, Some(2));
        let c = set(&c, "router.controller.verify=10").unwrap();
        assert_eq!(c.router.controller.verify, 10);
    }

    #[test]
    fn an_option_of_an_unnamed_struct_takes_its_named_fields() {
        let c = set(
            &torus(),
            "workload.reply=Some((length: Constant(flits: 5), writes: Some((fraction: 0.5, \
             request: Constant(flits: 5), reply: Constant(flits: 1)))))",
        )
        .unwrap();
        let r = c.workload.reply.unwrap();
        assert_eq!(r.length, LengthConfig::Constant { flits: 5 });
        assert_eq!(r.writes.unwrap().fraction, 0.5);
        assert!(set(&torus(), "workload.reply=None")
            .unwrap()
            .workload
            .reply
            .is_none());
    }

    #[test]
    fn options_take_none_some_or_the_bare_value() {
        let c = set(&torus(), "router.dma=Some(3)").unwrap();
        assert_eq!(c.router.dma, Some(3));
        let c = set(&c, "router.dma=None").unwrap();
        assert_eq!(c.router.dma, None);
        let c = set(&c, "router.dma=2").unwrap();
        assert_eq!(c.router.dma, Some(2));
    }

    #[test]
    fn replaces_whole_variants() {
        let c = set(&torus(), "workload.length=Exponential(mean: 24)").unwrap();
        assert_eq!(c.workload.length, LengthConfig::Exponential { mean: 24.0 });
        let c = set(&c, "experiment.measure=Messages(5000)").unwrap();
        assert_eq!(c.experiment.measure, Measure::Messages(5000));
    }

    #[test]
    fn tuples_set_tuple_fields_and_unbalanced_ones_are_refused() {
        let lan = parse_hw(
            "(topology: SwitchedTorus(k: 3), switching: Timeout(timeout: 20))",
            "t",
        )
        .unwrap();
        let c = set(&lan, "switching.watch=(4, 2)").unwrap();
        assert!(matches!(
            c.switching,
            SwitchingConfig::Timeout {
                watch: Some((4, 2)),
                ..
            }
        ));
        let c = set(&c, "switching.watch=Some((1, 0))").unwrap();
        assert!(matches!(
            c.switching,
            SwitchingConfig::Timeout {
                watch: Some((1, 0)),
                ..
            }
        ));
        assert!(set(&lan, "switching.watch=((1, 0)").is_err());
        assert!(set(&lan, "switching.watch=(1, 0, 3)").is_err());
    }

    #[test]
    fn variants_nest_and_their_fields_may_hold_commas() {
        let c = set(&torus(), "workload.length=Uniform(min: 8, max: 16)").unwrap();
        assert_eq!(c.workload.length, LengthConfig::Uniform { min: 8, max: 16 });
        let c = set(
            &torus(),
            "switching=Wormhole(routing: Adaptive, selection: Random)",
        )
        .unwrap();
        assert!(matches!(
            c.switching,
            SwitchingConfig::Wormhole {
                selection: Selection::Random,
                ..
            }
        ));
        assert!(set(&torus(), "workload.length=Uniform(min: 8, max: (16)").is_err());
    }

    #[test]
    fn a_field_given_twice_in_a_compound_value_is_refused() {
        let err = set(&torus(), "topology=Hypercube(dim: 3, dim: 4)")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`dim` is given twice"), "{err}");
        assert!(set(&torus(), "topology=Hypercube(dim: 3)").is_ok());
    }

    #[test]
    fn unknown_path_lists_valid_ones() {
        let err = set(&torus(), "topology.q=3").unwrap_err().to_string();
        assert!(err.contains("unknown field `topology.q`"), "{err}");
        assert!(err.contains("topology.k"), "{err}");
        assert!(err.contains("router.controller.verify"), "{err}");
    }

    #[test]
    fn wrong_type_is_an_error() {
        let err = set(&torus(), "router.vcs=many").unwrap_err().to_string();
        assert!(err.contains("router.vcs"), "{err}");
    }
}
