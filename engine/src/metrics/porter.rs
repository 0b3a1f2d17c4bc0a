//! NLTK's `PorterStemmer()` in its default mode (`NLTK_EXTENSIONS`), the
//! stemmer `rouge-score` uses with `use_stemmer=True` — ported rule for rule
//! from `nltk/stem/porter.py` (NLTK 3.9.2), so stemmed ROUGE equals the
//! HieraRAG authors'. Words are ASCII (`rouge-score` stems only its
//! `[a-z0-9]+` tokens); the tests compare every distinct word of two novels
//! with NLTK's own output.

fn is_consonant(w: &[u8], i: usize) -> bool {
    match w[i] {
        b'a' | b'e' | b'i' | b'o' | b'u' => false,
        b'y' => i == 0 || !is_consonant(w, i - 1),
        _ => true,
    }
}

/// m in [C](VC)^m[V]: the number of "vc" in the word's c/v sequence.
fn measure(w: &[u8]) -> usize {
    (1..w.len()).filter(|&i| !is_consonant(w, i - 1) && is_consonant(w, i)).count()
}

fn contains_vowel(w: &[u8]) -> bool {
    (0..w.len()).any(|i| !is_consonant(w, i))
}

fn ends_double_consonant(w: &[u8]) -> bool {
    let n = w.len();
    n >= 2 && w[n - 1] == w[n - 2] && is_consonant(w, n - 1)
}

fn ends_cvc(w: &[u8]) -> bool {
    let n = w.len();
    (n >= 3
        && is_consonant(w, n - 3)
        && !is_consonant(w, n - 2)
        && is_consonant(w, n - 1)
        && !matches!(w[n - 1], b'w' | b'x' | b'y'))
        || (n == 2 && !is_consonant(w, 0) && is_consonant(w, 1))
}

type Condition<'a> = &'a dyn Fn(&[u8]) -> bool;

/// `_apply_rule_list`: the first rule whose suffix the word has decides
/// (its condition on the stem met: replaced; else the word unchanged).
/// The suffix `*d` is "ends in a double consonant".
fn apply(word: Vec<u8>, rules: &[(&str, &str, Option<Condition>)]) -> Vec<u8> {
    for (suffix, replacement, condition) in rules {
        if *suffix == "*d" && ends_double_consonant(&word) {
            let stem = &word[..word.len() - 2];
            return if condition.is_none_or(|c| c(stem)) { [stem, replacement.as_bytes()].concat() } else { word };
        }
        if word.ends_with(suffix.as_bytes()) {
            let stem = &word[..word.len() - suffix.len()];
            return if condition.is_none_or(|c| c(stem)) { [stem, replacement.as_bytes()].concat() } else { word };
        }
    }
    word
}

fn replace(word: &[u8], suffix: &str, replacement: &str) -> Vec<u8> {
    [&word[..word.len() - suffix.len()], replacement.as_bytes()].concat()
}

fn step1a(w: Vec<u8>) -> Vec<u8> {
    if w.ends_with(b"ies") && w.len() == 4 {
        return replace(&w, "ies", "ie");
    }
    apply(w, &[("sses", "ss", None), ("ies", "i", None), ("ss", "ss", None), ("s", "", None)])
}

fn step1b(w: Vec<u8>) -> Vec<u8> {
    if w.ends_with(b"ied") {
        return if w.len() == 4 { replace(&w, "ied", "ie") } else { replace(&w, "ied", "i") };
    }
    if w.ends_with(b"eed") {
        let stem = &w[..w.len() - 3];
        return if measure(stem) > 0 { [stem, b"ee"].concat() } else { w };
    }
    let mut intermediate = None;
    for suffix in ["ed", "ing"] {
        if w.ends_with(suffix.as_bytes()) {
            let stem = &w[..w.len() - suffix.len()];
            if contains_vowel(stem) {
                intermediate = Some(stem.to_vec());
                break;
            }
        }
    }
    let Some(stem) = intermediate else { return w };
    let last = stem[stem.len() - 1];
    let last_str = (last as char).to_string();
    let not_lsz = move |_: &[u8]| !matches!(last, b'l' | b's' | b'z');
    let short = |s: &[u8]| measure(s) == 1 && ends_cvc(s);
    apply(
        stem,
        &[
            ("at", "ate", None),
            ("bl", "ble", None),
            ("iz", "ize", None),
            ("*d", &last_str, Some(&not_lsz)),
            ("", "e", Some(&short)),
        ],
    )
}

fn step1c(w: Vec<u8>) -> Vec<u8> {
    let cond = |s: &[u8]| s.len() > 1 && is_consonant(s, s.len() - 1);
    apply(w, &[("y", "i", Some(&cond))])
}

fn positive(s: &[u8]) -> bool {
    measure(s) > 0
}

fn step2(w: Vec<u8>) -> Vec<u8> {
    if w.ends_with(b"alli") && positive(&w[..w.len() - 4]) {
        return step2(replace(&w, "alli", "al"));
    }
    let whole = w.clone();
    let logi = move |_: &[u8]| positive(&whole[..whole.len() - 3]);
    let p: Condition = &positive;
    apply(
        w,
        &[
            ("ational", "ate", Some(p)),
            ("tional", "tion", Some(p)),
            ("enci", "ence", Some(p)),
            ("anci", "ance", Some(p)),
            ("izer", "ize", Some(p)),
            ("bli", "ble", Some(p)),
            ("alli", "al", Some(p)),
            ("entli", "ent", Some(p)),
            ("eli", "e", Some(p)),
            ("ousli", "ous", Some(p)),
            ("ization", "ize", Some(p)),
            ("ation", "ate", Some(p)),
            ("ator", "ate", Some(p)),
            ("alism", "al", Some(p)),
            ("iveness", "ive", Some(p)),
            ("fulness", "ful", Some(p)),
            ("ousness", "ous", Some(p)),
            ("aliti", "al", Some(p)),
            ("iviti", "ive", Some(p)),
            ("biliti", "ble", Some(p)),
            ("fulli", "ful", Some(p)),
            ("logi", "log", Some(&logi)),
        ],
    )
}

fn step3(w: Vec<u8>) -> Vec<u8> {
    let p: Condition = &positive;
    apply(
        w,
        &[
            ("icate", "ic", Some(p)),
            ("ative", "", Some(p)),
            ("alize", "al", Some(p)),
            ("iciti", "ic", Some(p)),
            ("ical", "ic", Some(p)),
            ("ful", "", Some(p)),
            ("ness", "", Some(p)),
        ],
    )
}

fn step4(w: Vec<u8>) -> Vec<u8> {
    let gt1 = |s: &[u8]| measure(s) > 1;
    let ion = |s: &[u8]| measure(s) > 1 && matches!(s.last(), Some(b's' | b't'));
    let g: Condition = &gt1;
    apply(
        w,
        &[
            ("al", "", Some(g)),
            ("ance", "", Some(g)),
            ("ence", "", Some(g)),
            ("er", "", Some(g)),
            ("ic", "", Some(g)),
            ("able", "", Some(g)),
            ("ible", "", Some(g)),
            ("ant", "", Some(g)),
            ("ement", "", Some(g)),
            ("ment", "", Some(g)),
            ("ent", "", Some(g)),
            ("ion", "", Some(&ion)),
            ("ou", "", Some(g)),
            ("ism", "", Some(g)),
            ("ate", "", Some(g)),
            ("iti", "", Some(g)),
            ("ous", "", Some(g)),
            ("ive", "", Some(g)),
            ("ize", "", Some(g)),
        ],
    )
}

fn step5a(w: Vec<u8>) -> Vec<u8> {
    if w.ends_with(b"e") {
        let stem = &w[..w.len() - 1];
        if measure(stem) > 1 || (measure(stem) == 1 && !ends_cvc(stem)) {
            return stem.to_vec();
        }
    }
    w
}

fn step5b(w: Vec<u8>) -> Vec<u8> {
    let whole = w.clone();
    let cond = move |_: &[u8]| measure(&whole[..whole.len() - 1]) > 1;
    apply(w, &[("ll", "l", Some(&cond))])
}

/// NLTK's irregular forms (`NLTK_EXTENSIONS`' pool).
fn irregular(word: &str) -> Option<&'static str> {
    Some(match word {
        "sky" | "skies" => "sky",
        "dying" => "die",
        "lying" => "lie",
        "tying" => "tie",
        "news" => "news",
        "innings" | "inning" => "inning",
        "outings" | "outing" => "outing",
        "cannings" | "canning" => "canning",
        "howe" => "howe",
        "proceed" => "proceed",
        "exceed" => "exceed",
        "succeed" => "succeed",
        _ => return None,
    })
}

/// `PorterStemmer().stem(word)` (lower-cased first, as NLTK does). A word
/// with characters outside ASCII is lower-cased only.
pub fn stem(word: &str) -> String {
    let lower = word.to_lowercase();
    if let Some(s) = irregular(word) {
        return s.to_string();
    }
    if word.chars().count() <= 2 || !lower.is_ascii() {
        return lower;
    }
    let w = step5b(step5a(step4(step3(step2(step1c(step1b(step1a(lower.into_bytes()))))))));
    String::from_utf8(w).expect("ASCII in, ASCII out")
}
