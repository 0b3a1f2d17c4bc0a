//! What a model costs.

use serde::{Deserialize, Serialize};

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input_per_m: f64,
    pub output_per_m: f64,
    /// Input tokens read from the provider's prefix cache (`None`: at the
    /// input price).
    #[serde(default)]
    pub cached_input_per_m: Option<f64>,
}

impl Price {
    /// As the settings form and `--llm-price` write it: `IN,OUT[,CACHED]`.
    pub fn spec(&self) -> String {
        match self.cached_input_per_m {
            Some(c) => format!("{},{},{c}", self.input_per_m, self.output_per_m),
            None => format!("{},{}", self.input_per_m, self.output_per_m),
        }
    }
}

/// A price as saved: `[IN, OUT]` (before cached input had a rate) or the
/// record.
pub mod saved {
    use super::Price;
    use serde::{Deserialize, Deserializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Saved {
        Pair(f64, f64),
        Record(Price),
    }

    pub fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Price>, D::Error> {
        Ok(Option::<Saved>::deserialize(d)?.map(|s| match s {
            Saved::Pair(input_per_m, output_per_m) => Price { input_per_m, output_per_m, cached_input_per_m: None },
            Saved::Record(p) => p,
        }))
    }
}

/// The shortest prompt prefix a provider's automatic prompt cache serves
/// (OpenAI's rule; smaller prompts are never read from the cache).
pub const PREFIX_CACHE_MIN: u64 = 1_024;
/// A cached prefix grows in steps of this many tokens past the minimum.
pub const PREFIX_CACHE_STEP: u64 = 128;

/// The tokens of a prompt a provider's automatic prefix cache can serve
/// when an earlier prompt began with the same `common` tokens: none below
/// [`PREFIX_CACHE_MIN`], then the minimum and whole steps of
/// [`PREFIX_CACHE_STEP`] (OpenAI's documented rule; other providers cache
/// at finer grain, so this errs low for them).
pub fn cacheable_prefix(common: u64) -> u64 {
    if common < PREFIX_CACHE_MIN {
        0
    } else {
        PREFIX_CACHE_MIN + (common - PREFIX_CACHE_MIN) / PREFIX_CACHE_STEP * PREFIX_CACHE_STEP
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_is_cacheable_from_1024_tokens_in_steps_of_128() {
        assert_eq!(cacheable_prefix(0), 0);
        assert_eq!(cacheable_prefix(1_023), 0);
        assert_eq!(cacheable_prefix(1_024), 1_024);
        assert_eq!(cacheable_prefix(1_151), 1_024);
        assert_eq!(cacheable_prefix(1_152), 1_152);
        assert_eq!(cacheable_prefix(5_000), 1_024 + 31 * 128);
    }

    #[derive(Deserialize)]
    struct S {
        #[serde(default, deserialize_with = "saved::read")]
        price: Option<Price>,
    }

    #[test]
    fn a_saved_price_reads_in_both_layouts() {
        let old: S = serde_json::from_str(r#"{"price": [0.15, 0.6]}"#).unwrap();
        assert_eq!(old.price, Some(Price { input_per_m: 0.15, output_per_m: 0.6, cached_input_per_m: None }));
        let new: S =
            serde_json::from_str(r#"{"price": {"input_per_m": 1, "output_per_m": 4, "cached_input_per_m": 0.25}}"#)
                .unwrap();
        assert_eq!(new.price.unwrap().spec(), "1,4,0.25");
        assert_eq!(serde_json::from_str::<S>(r#"{"price": null}"#).unwrap().price, None);
        assert_eq!(serde_json::from_str::<S>("{}").unwrap().price, None);
    }
}
