//! The sample corpus: five short, original documents (about 2,300 words)
//! written for Assay, a fictional local history of the estuary village of
//! Saltmere. It is dense with people, organisations, places, events and the
//! relations between them, so that a knowledge graph and graph-grounded
//! questions built from it have something to find. Loaded with one click on
//! the empty home page or with `assay corpus add PROJECT --sample`.

/// `(file name, text)` of each sample document, in reading order.
pub const SAMPLE_FILES: &[(&str, &str)] = &[
    ("01_the_founding_of_saltmere.md", include_str!("../sample/01_the_founding_of_saltmere.md")),
    ("02_the_salt_guild.md", include_str!("../sample/02_the_salt_guild.md")),
    ("03_the_lighthouse_and_the_wreck.md", include_str!("../sample/03_the_lighthouse_and_the_wreck.md")),
    ("04_saltmere_in_the_modern_age.md", include_str!("../sample/04_saltmere_in_the_modern_age.md")),
    ("05_the_river_oll.md", include_str!("../sample/05_the_river_oll.md")),
];

/// The sample as `(name, bytes)` pairs, ready for [`crate::corpus::import_files`].
pub fn sample_files() -> impl Iterator<Item = (&'static str, &'static [u8])> {
    SAMPLE_FILES.iter().map(|(name, text)| (*name, text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{import_files, ImportLimits};

    #[test]
    fn sample_imports_cleanly_with_a_few_thousand_words() {
        let out = import_files(sample_files(), &ImportLimits::default());
        assert_eq!(out.rejected, vec![]);
        assert_eq!(out.documents.len(), 5);
        let words: usize = out.documents.iter().map(|d| d.text.split_whitespace().count()).sum();
        assert!((2000..5000).contains(&words), "{words} words");
        assert_eq!(out.documents[0].title, "The Founding of Saltmere");
    }
}
