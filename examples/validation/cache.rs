//! Emulated points memoised under a key and kept in a JSON file between runs
//! (`target/validation-pNNN.json`; `--fresh` starts from nothing), so that a rerun that
//! only changes the text takes seconds. Papers 002 and 003 keep their slow points here;
//! each key holds the set-up, the effort and the seed, so a changed point is emulated
//! again.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;

/// The points emulated so far, by key, and the file they are kept in.
pub struct Cache<V> {
    points: HashMap<String, V>,
    file: Option<PathBuf>,
    /// Points taken from the cache.
    pub hits: usize,
    /// Points emulated now.
    pub runs: usize,
}

impl<V: Clone + Serialize + DeserializeOwned> Cache<V> {
    /// The points kept in `file` (none when there is no file or it cannot be read).
    pub fn open(file: Option<PathBuf>) -> Self {
        Cache {
            points: file
                .as_ref()
                .and_then(|f| std::fs::read_to_string(f).ok())
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or_default(),
            file,
            hits: 0,
            runs: 0,
        }
    }

    /// The point under `key`: from the cache, or emulated by `run` now and written to the
    /// file at once (a run stopped halfway keeps what it emulated).
    pub fn get_or_run(
        &mut self,
        key: String,
        run: impl FnOnce() -> Result<V, Box<dyn std::error::Error>>,
    ) -> Result<V, Box<dyn std::error::Error>> {
        if let Some(v) = self.points.get(&key) {
            self.hits += 1;
            return Ok(v.clone());
        }
        self.runs += 1;
        let v = run()?;
        self.points.insert(key, v.clone());
        if let Some(f) = &self.file {
            std::fs::write(f, serde_json::to_string(&self.points)?)?;
        }
        Ok(v)
    }
}
