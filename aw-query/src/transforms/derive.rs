//! [`Derived`]: new data computed once per distinct shared data object.
//!
//! Events read from a source share their data (see
//! `aw_models::SharedEvent`), so a transform that adds keys
//! (`categorize`'s `$category`, `split_url_events`'s URL parts) computes the
//! new object once per distinct input object, by pointer, and every event
//! that shared the input shares the output. A year of window events has
//! ~17k distinct objects for ~300k events.

use std::collections::HashMap;
use std::sync::Arc;

use aw_models::Data;

/// A memo from input data (by pointer) to derived data.
#[derive(Debug, Default)]
pub(crate) struct Derived {
    /// Address of the input → (the input, kept alive so the address is not
    /// reused during the transform, and the output).
    memo: HashMap<usize, (Arc<Data>, Arc<Data>)>,
}

impl Derived {
    /// The data derived from `input` by `derive`, computed on first sight.
    pub fn get<E>(
        &mut self,
        input: &Arc<Data>,
        derive: impl FnOnce(&Data) -> Result<Data, E>,
    ) -> Result<Arc<Data>, E> {
        let key = Arc::as_ptr(input) as usize;
        if let Some((_, output)) = self.memo.get(&key) {
            return Ok(Arc::clone(output));
        }
        let output = Arc::new(derive(input)?);
        self.memo
            .insert(key, (Arc::clone(input), Arc::clone(&output)));
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn derives_once_per_shared_object() {
        let shared = Arc::new(json!({"a": 1}).as_object().cloned().unwrap());
        let equal_copy = Arc::new((*shared).clone());
        let mut derived = Derived::default();
        let mut calls = 0;
        let mut add = |data: &Data| -> Result<Data, ()> {
            calls += 1;
            let mut data = data.clone();
            data.insert("b".into(), json!(2));
            Ok(data)
        };
        let first = derived.get(&shared, &mut add).unwrap();
        let again = derived.get(&Arc::clone(&shared), &mut add).unwrap();
        let other = derived.get(&equal_copy, &mut add).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(first, other);
        assert_eq!(first["b"], 2);
        assert_eq!(calls, 2);
    }
}
