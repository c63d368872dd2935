//! The summary at the top of docs/validation.md: every claim of every paper with its
//! verdict. Each section writes its claims as HTML comments (one JSON object each) beside
//! its own claims table; the summary is rebuilt from the comments of the whole page after
//! any section is regenerated, so `--only pNNN` keeps it current without running the
//! other sections.

use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// Markers around the summary.
pub const BEGIN: &str = "<!-- summary: begin -->";
/// End marker.
pub const END: &str = "<!-- summary: end -->";
const TAG: &str = "<!-- claim: ";

/// How far routemu reproduces a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Reproduced as the paper states it.
    Agrees,
    /// Reproduced in part, or only under a condition the reason states.
    Partly,
    /// Not reproduced.
    No,
}

/// One claim of a paper, checked.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Claim {
    /// The paper's number, e.g. "002".
    pub paper: String,
    /// The section's id of the claim (Q1, F3, ...).
    pub id: String,
    /// The claim in a few words.
    pub claim: String,
    pub verdict: Verdict,
    /// Why, in a few words, with the decisive number.
    pub reason: String,
    /// The heading (anchor text) of the section that shows the evidence.
    pub section: String,
}

impl Claim {
    /// A claim; `section` is the heading of the part of the page that shows it.
    pub fn new(
        paper: &str,
        id: &str,
        claim: &str,
        verdict: Verdict,
        reason: &str,
        section: &str,
    ) -> Claim {
        Claim {
            paper: paper.into(),
            id: id.into(),
            claim: claim.into(),
            verdict,
            reason: reason.into(),
            section: section.into(),
        }
    }
}

/// The claims as HTML comments, one per line (invisible in the rendered page).
pub fn comments(claims: &[Claim]) -> String {
    let mut s = String::new();
    for c in claims {
        let json = serde_json::to_string(c).expect("a claim serialises");
        // "--" cannot appear inside an HTML comment.
        let _ = writeln!(s, "{TAG}{} -->", json.replace("--", "\\u002d\\u002d"));
    }
    s
}

/// `text` cut to about `n` characters at a word boundary, with an ellipsis if cut.
pub fn short(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        return text.to_string();
    }
    let cut: String = text.chars().take(n).collect();
    let end = cut.rfind(' ').unwrap_or(cut.len());
    format!("{} …", cut[..end].trim_end_matches([',', ';', ':']))
}

/// The verdict a section wrote in words.
fn verdict_of(word: &str) -> Option<Verdict> {
    match word.trim_matches('*').trim() {
        "agrees" => Some(Verdict::Agrees),
        "partly" => Some(Verdict::Partly),
        "no" => Some(Verdict::No),
        _ => None,
    }
}

/// Claims from a bulleted list of the form `- **claim** (where): **verdict** … — reason`.
pub fn from_bullets(paper: &str, section: &str, md: &str) -> Vec<Claim> {
    let found = md.lines().filter_map(|l| {
        let rest = l.strip_prefix("- **")?;
        let (claim, rest) = rest.split_once("**")?;
        let (place, rest) = rest.split_once(": **")?;
        let (word, rest) = rest.split_once("**")?;
        let reason = rest.split_once(" — ").map_or(rest, |(_, r)| r);
        Some((
            format!("{claim}{}", place.trim_end()),
            verdict_of(word)?,
            reason.to_string(),
        ))
    });
    numbered(paper, section, found)
}

/// Claims from a table whose first three columns are claim, verdict and reason.
pub fn from_table(paper: &str, section: &str, md: &str) -> Vec<Claim> {
    let found = md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| claim |"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            let (claim, word, reason) = (cells.first()?, cells.get(1)?, cells.get(2)?);
            Some((claim.to_string(), verdict_of(word)?, reason.to_string()))
        });
    numbered(paper, section, found)
}

/// Claims C1, C2, … of one section from (claim, verdict, reason) triples.
fn numbered(
    paper: &str,
    section: &str,
    found: impl Iterator<Item = (String, Verdict, String)>,
) -> Vec<Claim> {
    found
        .enumerate()
        .map(|(i, (claim, verdict, reason))| {
            Claim::new(
                paper,
                &format!("C{}", i + 1),
                &claim,
                verdict,
                &short(&reason, 200),
                section,
            )
        })
        .collect()
}

/// A table cell's text with every pipe escaped once (some come escaped already).
fn escape(text: &str) -> String {
    text.replace("\\|", "|").replace('|', "\\|")
}

/// GitHub's anchor of a heading.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The summary table of every claim found in `page`, between the markers.
pub fn summary(page: &str) -> String {
    let mut claims: Vec<Claim> = page
        .lines()
        .filter_map(|l| l.strip_prefix(TAG)?.strip_suffix(" -->"))
        .filter_map(|j| serde_json::from_str(j).ok())
        .collect();
    claims.sort_by(|a, b| a.paper.cmp(&b.paper));
    let mut s = format!("{BEGIN}\n## Summary: every claim of the papers, checked\n\n");
    let count = |v: Verdict| claims.iter().filter(|c| c.verdict == v).count();
    let _ = writeln!(
        s,
        "{} claims: {} agree, {} partly, {} do not. Each row links to the section that shows \
         the evidence; the verdicts are computed by the generator from the numbers of that \
         section.\n",
        claims.len(),
        count(Verdict::Agrees),
        count(Verdict::Partly),
        count(Verdict::No)
    );
    let _ = writeln!(
        s,
        "| paper | id | claim | verdict | reason |\n|---|---|---|---|---|"
    );
    for c in &claims {
        let _ = writeln!(
            s,
            "| {} | [{}](#{}) | {} | {} | {} |",
            c.paper,
            c.id,
            anchor(&c.section),
            escape(&c.claim),
            match c.verdict {
                Verdict::Agrees => "agrees",
                Verdict::Partly => "**partly**",
                Verdict::No => "**no**",
            },
            escape(&c.reason)
        );
    }
    let _ = writeln!(s, "{END}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_survive_the_page_round_trip() {
        let c = Claim::new(
            "002",
            "Q1",
            "a -- b",
            Verdict::Partly,
            "x | y",
            "Paper 002: x",
        );
        let page = format!("text\n{}more\n", comments(&[c]));
        let s = summary(&page);
        assert!(s.contains("1 claims: 0 agree, 1 partly, 0 do not"), "{s}");
        assert!(s.contains("a -- b") && s.contains("x \\| y") && s.contains("#paper-002-x"));
    }

    #[test]
    fn bullets_and_tables_give_their_claims_and_skip_other_lines() {
        let md = "- **Adaptive best** (Fig. 10): **partly** — 12 of 13\n\
                  - plain bullet\n\
                  - **Rise** (Fig. 9): **no** in the emulator — falls\n";
        let c = from_bullets("000", "S", md);
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].verdict, c[0].reason.as_str()),
            (Verdict::Partly, "12 of 13")
        );
        assert_eq!(
            (c[1].claim.as_str(), c[1].verdict),
            ("Rise (Fig. 9)", Verdict::No)
        );
        let t = "| claim | verdict | why |\n|---|---|---|\n| within 6% | no | 13% |\n";
        let c = from_table("004", "S", t);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].verdict, c[0].reason.as_str()), (Verdict::No, "13%"));
    }
}
