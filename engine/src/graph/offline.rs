//! The offline extractor: entities and relations from one chunk with
//! classical NLP only, for the `offline` provider.
//!
//! - **Entities** are runs of capitalised words ("Mock Turtle", "Queen of
//!   Hearts", with `of`/`the` allowed inside), minus function words and
//!   headings. A capital at the start of a sentence or a quotation proves
//!   nothing, so a word seen capitalised only there is kept only when the
//!   chunk also capitalises it elsewhere. Frequent lower-case noun phrases
//!   ("the door" three or more times) are kept as objects.
//! - **Types** are guessed from cues: organisation, location and event words
//!   in the name ("Guild", "River", "Flood"), titles and speech verbs for
//!   persons ("the King", "said Alice"); otherwise `concept`.
//! - **Descriptions** are the first sentences that mention the entity.
//! - **Relations** join entities mentioned in the same sentence; the first
//!   such sentence is the description and the number of sentences is the
//!   strength.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{normalise_name, Entity, Extraction, Relation};
use crate::text::sentences;

/// Capitalised words that are not names: function words that start
/// sentences, pronouns, interjections, headings, numerals, weekdays.
const NOT_NAMES: &[&str] = &[
    "a",
    "about",
    "after",
    "again",
    "ah",
    "all",
    "also",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "before",
    "but",
    "by",
    "can",
    "chapter",
    "come",
    "could",
    "dear",
    "did",
    "do",
    "does",
    "don't",
    "down",
    "each",
    "even",
    "ever",
    "every",
    "first",
    "for",
    "from",
    "good",
    "had",
    "has",
    "have",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "however",
    "i",
    "i'll",
    "i'm",
    "i've",
    "if",
    "in",
    "indeed",
    "is",
    "it",
    "it's",
    "its",
    "just",
    "last",
    "let",
    "let's",
    "like",
    "may",
    "me",
    "might",
    "mine",
    "more",
    "most",
    "much",
    "must",
    "my",
    "no",
    "nor",
    "not",
    "nothing",
    "now",
    "of",
    "off",
    "oh",
    "on",
    "once",
    "one",
    "only",
    "or",
    "our",
    "out",
    "perhaps",
    "please",
    "pray",
    "quite",
    "really",
    "she",
    "shall",
    "should",
    "so",
    "some",
    "soon",
    "still",
    "such",
    "sure",
    "than",
    "that",
    "that's",
    "the",
    "their",
    "them",
    "then",
    "there",
    "there's",
    "these",
    "they",
    "this",
    "those",
    "though",
    "thus",
    "to",
    "too",
    "two",
    "up",
    "very",
    "was",
    "we",
    "well",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "yes",
    "yet",
    "you",
    "your",
    "ii",
    "iii",
    "iv",
    "v",
    "vi",
    "vii",
    "viii",
    "ix",
    "x",
    "xi",
    "xii",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "mr",
    "mrs",
    "ms",
    "dr",
    "messrs",
    "prof",
    "miss",
    "sir",
    "madam",
    "project",
    "gutenberg",
    "ebook",
];

/// Lower-case nouns too general to be entities even when frequent.
const GENERIC_NOUNS: &[&str] = &[
    "way", "time", "moment", "thing", "things", "other", "others", "same", "rest", "end", "matter", "right", "left",
    "whole", "little", "great", "first", "last", "next", "world", "subject", "question", "answer", "day", "night",
    "morning", "air", "place", "side", "top", "bottom", "middle", "number", "sort", "kind", "part", "course", "case",
    "fact", "use", "less", "more", "most", "least", "best", "same", "poor", "old", "new", "long", "short", "reason",
    "words", "word", "idea",
];

const PERSON_TITLES: &[&str] = &[
    "king",
    "queen",
    "duchess",
    "duke",
    "prince",
    "princess",
    "lord",
    "lady",
    "sir",
    "mr",
    "mrs",
    "miss",
    "dr",
    "captain",
    "judge",
    "professor",
    "uncle",
    "aunt",
    "father",
    "mother",
    "brother",
    "sister",
    "bishop",
    "saint",
    "reverend",
];
const SPEECH_VERBS: &[&str] = &[
    "said",
    "says",
    "asked",
    "cried",
    "replied",
    "thought",
    "shouted",
    "whispered",
    "answered",
    "exclaimed",
    "added",
    "began",
    "continued",
    "remarked",
];
const ORGANISATION_WORDS: &[&str] = &[
    "guild",
    "company",
    "society",
    "board",
    "school",
    "church",
    "council",
    "court",
    "bank",
    "university",
    "archive",
    "station",
    "service",
    "party",
    "army",
    "navy",
    "club",
    "association",
    "institute",
    "ministry",
    "parliament",
    "corporation",
];
const LOCATION_WORDS: &[&str] = &[
    "river", "street", "road", "lane", "town", "city", "village", "cross", "ford", "point", "island", "hall", "sea",
    "bay", "lake", "wood", "woods", "forest", "hill", "hills", "mountain", "estuary", "quay", "staithe", "inn",
    "house", "square", "park", "bridge", "castle", "tower", "valley", "street", "county", "kingdom", "england",
    "london", "france", "kenya",
];
const EVENT_WORDS: &[&str] = &[
    "war",
    "battle",
    "flood",
    "feast",
    "festival",
    "judgment",
    "wreck",
    "trial",
    "uprising",
    "revolution",
    "rebellion",
    "election",
    "race",
];

#[derive(Debug, Clone)]
struct Token {
    /// The word without surrounding punctuation.
    word: String,
    /// Starts a sentence or a quotation: its capital proves nothing.
    initial: bool,
    /// Punctuation follows it, ending any run of names.
    breaks: bool,
}

fn is_capitalised(word: &str) -> bool {
    let mut chars = word.chars();
    let first_upper = chars.next().is_some_and(char::is_uppercase);
    // ALL-CAPS words of more than one letter are headings, not names.
    let all_caps = word.chars().filter(|c| c.is_alphabetic()).count() > 1 && !word.chars().any(char::is_lowercase);
    first_upper && !all_caps
}

/// Tokens of a sentence. The first word of each line counts as initial too:
/// verse capitalises every line.
fn tokens(sentence: &str) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    for line in sentence.split('\n') {
        line_tokens(line, &mut out);
    }
    out
}

fn line_tokens(line: &str, out: &mut Vec<Token>) {
    let mut after_break = true;
    // A dash written "--" (or an em or en dash) between two words is
    // punctuation, not part of either: "Holmes--and" is "Holmes — and".
    let line = line.replace("--", " — ").replace(['—', '–'], " — ");
    for raw in line.split_whitespace() {
        let opens_quote = raw.starts_with(['"', '\'', '“', '‘', '(', '[']);
        let bare = raw.trim_matches(|c: char| !c.is_alphanumeric());
        // The possessive is not part of the name: "Mwihaki's" is Mwihaki.
        let word = bare.strip_suffix("'s").or_else(|| bare.strip_suffix("’s")).unwrap_or(bare).to_string();
        // Punctuation after the word ("Jacob,'"), or a possessive
        // ("Scrooge's Nephew"), ends any run of names.
        let after = raw.rfind(|c: char| c.is_alphanumeric()).map_or("", |i| &raw[i..]).chars().skip(1).count();
        let breaks = after > 0 || word.len() < bare.len();
        if word.is_empty() {
            after_break = true;
            continue;
        }
        // "Mr." ends no sentence: the name after a title is not initial.
        let title = matches!(word.to_lowercase().as_str(), "mr" | "mrs" | "ms" | "dr" | "st" | "messrs" | "prof");
        out.push(Token { word, initial: after_break || opens_quote, breaks });
        after_break = !title && raw.ends_with(['.', '!', '?', ':', ';', '"', '“', '”', '-', '—'])
            || raw.ends_with("'") && !raw.ends_with("s'");
    }
    if let Some(last) = out.last_mut() {
        last.breaks = true;
    }
}

fn not_name(word: &str) -> bool {
    let w = word.to_lowercase();
    NOT_NAMES.contains(&w.as_str()) || SPEECH_VERBS.contains(&w.as_str()) || w.chars().all(|c| c.is_ascii_digit())
}

/// Runs of capitalised tokens in a sentence: `(surface form, all sentence-initial)`.
fn capital_runs(toks: &[Token]) -> Vec<(String, bool)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if !is_capitalised(&toks[i].word) || not_name(&toks[i].word) {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i; // inclusive
                         // "St." continues a name across its full stop: "Lord St. Simon".
        while (!toks[end].breaks || toks[end].word == "St") && end + 1 < toks.len() {
            let next = &toks[end + 1];
            // A repeated word ("Scrooge Scrooge") is two mentions, not one name.
            if next.word == toks[end].word {
                break;
            }
            if is_capitalised(&next.word) && !not_name(&next.word) {
                end += 1;
            } else if matches!(next.word.as_str(), "of" | "the")
                && !next.breaks
                && toks.get(end + 2).is_some_and(|t| is_capitalised(&t.word) && !not_name(&t.word))
            {
                end += 2;
            } else {
                break;
            }
        }
        let form: Vec<&str> = toks[start..=end].iter().map(|t| t.word.as_str()).collect();
        runs.push((form.join(" "), toks[start].initial && start == end));
        i = end + 1;
    }
    runs
}

/// The entity's type from cues in its name and its sentences; `aliases`
/// are the shorter names it goes by in the chunk ("Scrooge" for "Ebenezer
/// Scrooge"), whose cues count too.
fn guess_type(name: &str, aliases: &[String], sentences_of: &[&str], lower_noun: bool) -> &'static str {
    if lower_noun {
        return "object";
    }
    let words: Vec<String> = name.split_whitespace().map(str::to_lowercase).collect();
    let last = words.last().map(String::as_str).unwrap_or("");
    if words.iter().any(|w| ORGANISATION_WORDS.contains(&w.as_str())) {
        return "organization";
    }
    if EVENT_WORDS.contains(&last) {
        return "event";
    }
    if words.iter().any(|w| LOCATION_WORDS.contains(&w.as_str())) {
        return "location";
    }
    if words.first().is_some_and(|w| PERSON_TITLES.contains(&w.as_str())) {
        return "person";
    }
    // "Old Marley", "Poor Bob": a descriptor of people before a name.
    const PERSON_DESCRIPTORS: [&str; 5] = ["old", "young", "poor", "dear", "late"];
    let described = |n: &str| {
        let n = n.to_lowercase();
        n.split(' ').count() >= 2 && PERSON_DESCRIPTORS.iter().any(|d| n.starts_with(&format!("{d} ")))
    };
    if described(name) || aliases.iter().any(|a| described(a)) {
        return "person";
    }
    let names: Vec<String> =
        std::iter::once(name.to_lowercase()).chain(aliases.iter().map(|a| a.to_lowercase())).collect();
    let spoken = sentences_of.iter().any(|s| {
        let s = s.to_lowercase();
        names.iter().any(|n| {
            SPEECH_VERBS.iter().any(|v| {
                s.contains(&format!("{v} {n}"))
                    || s.contains(&format!("{v} the {n}"))
                    || s.contains(&format!("{n} {v}"))
            })
        })
    });
    // A title before the name: "Mr. Holmes", "Mrs Hudson", "Uncle Scrooge".
    let titled = sentences_of.iter().any(|s| {
        let s = s.to_lowercase();
        names
            .iter()
            .any(|n| PERSON_TITLES.iter().any(|t| s.contains(&format!("{t} {n}")) || s.contains(&format!("{t}. {n}"))))
    });
    if spoken || titled {
        return "person";
    }
    "concept"
}

/// The names in a short text (a question): runs of capitalised words, as in
/// [`extract`], except a lone word capitalised only because it starts the
/// sentence ("Describe", "Whose") — one sentence gives no other evidence.
pub fn names_in(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for sentence in sentences(text) {
        for (form, initial_only) in capital_runs(&tokens(sentence)) {
            if !initial_only && !out.iter().any(|o| normalise_name(o) == normalise_name(&form)) {
                out.push(form);
            }
        }
    }
    out
}

/// Extracts entities and relations from one chunk of text.
pub fn extract(text: &str) -> Extraction {
    let sents: Vec<&str> = sentences(text);
    let toks: Vec<Vec<Token>> = sents.iter().map(|s| tokens(s)).collect();

    // Evidence: keys capitalised somewhere other than the start of a sentence.
    let mut confirmed: HashSet<String> = HashSet::new();
    for t in &toks {
        for (form, initial_only) in capital_runs(t) {
            if !initial_only {
                confirmed.insert(normalise_name(&form));
            }
        }
    }
    // Frequent lower-case noun phrases: "the <noun>".
    let mut the_noun: HashMap<String, usize> = HashMap::new();
    for t in &toks {
        for pair in t.windows(2) {
            let noun = pair[1].word.to_lowercase();
            if pair[0].word.eq_ignore_ascii_case("the")
                && pair[1].word.chars().all(|c| c.is_lowercase() || c == '-')
                && noun.chars().count() > 3
                && !noun.ends_with("ly")
                && !GENERIC_NOUNS.contains(&noun.as_str())
                && !NOT_NAMES.contains(&noun.as_str())
            {
                *the_noun.entry(noun).or_default() += 1;
            }
        }
    }
    let objects: HashSet<String> = the_noun.into_iter().filter(|(_, n)| *n >= 3).map(|(w, _)| w).collect();

    // Mentions per sentence, and surface forms per key.
    let mut forms: HashMap<String, HashMap<String, usize>> = HashMap::new();
    let mut mentions: Vec<Vec<String>> = Vec::with_capacity(toks.len());
    for t in &toks {
        let mut here: Vec<String> = Vec::new();
        for (form, initial_only) in capital_runs(t) {
            let key = normalise_name(&form);
            if key.chars().count() < 2 || (initial_only && !confirmed.contains(&key)) {
                continue;
            }
            *forms.entry(key.clone()).or_default().entry(form).or_default() += 1;
            if !here.contains(&key) {
                here.push(key);
            }
        }
        for w in t {
            let lw = w.word.to_lowercase();
            if objects.contains(&lw) && !here.contains(&lw) {
                *forms.entry(lw.clone()).or_default().entry(lw.clone()).or_default() += 1;
                here.push(lw);
            }
        }
        mentions.push(here);
    }

    // Aliases: a one-word name that is the first or last word of exactly one
    // longer name in the chunk ("Marley" of "Jacob Marley") is that entity.
    let aliases = aliases_of(&forms, &objects);
    let mut alias_forms: HashMap<String, Vec<String>> = HashMap::new();
    for (short, full) in &aliases {
        if let Some(surface) = forms.remove(short) {
            alias_forms.entry(full.clone()).or_default().extend(surface.into_keys());
        }
    }
    for here in mentions.iter_mut() {
        for k in here.iter_mut() {
            if let Some(full) = aliases.get(k) {
                k.clone_from(full);
            }
        }
        let mut seen = HashSet::new();
        here.retain(|k| seen.insert(k.clone()));
    }

    let mut entities = Vec::new();
    for (key, surface) in &forms {
        let name = surface
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
            .map(|(f, _)| f.clone())
            .unwrap_or_default();
        let mentioned_in: Vec<&str> =
            mentions.iter().zip(&sents).filter(|(m, _)| m.contains(key)).map(|(_, s)| *s).collect();
        let description: String = mentioned_in
            .iter()
            .take(2)
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join(" ");
        let kind =
            guess_type(&name, alias_forms.get(key).map_or(&[][..], |a| &a[..]), &mentioned_in, objects.contains(key));
        entities.push(Entity { name, kind: kind.to_string(), description: truncate(&description, 400) });
    }
    entities.sort_by(|a, b| a.name.cmp(&b.name));

    // Relations: co-occurrence in a sentence.
    let mut pairs: BTreeMap<(String, String), (usize, &str)> = BTreeMap::new();
    for (keys, sentence) in mentions.iter().zip(&sents) {
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                let pair = if a < b { (a.clone(), b.clone()) } else { (b.clone(), a.clone()) };
                pairs.entry(pair).or_insert((0, sentence)).0 += 1;
            }
        }
    }
    let display: HashMap<String, String> = entities.iter().map(|e| (normalise_name(&e.name), e.name.clone())).collect();
    let relations = pairs
        .into_iter()
        .map(|((a, b), (count, sentence))| Relation {
            source: display.get(&a).cloned().unwrap_or(a),
            target: display.get(&b).cloned().unwrap_or(b),
            description: truncate(&sentence.split_whitespace().collect::<Vec<_>>().join(" "), 300),
            keywords: Vec::new(),
            strength: count as f64,
        })
        .collect();
    Extraction { entities, relations }
}

/// Words that describe a person before the name ("Old Marley", "Poor Bob")
/// without being part of it.
const DESCRIPTORS: &[&str] = &["old", "young", "poor", "little", "dear", "good", "great", "late", "mister"];

/// A key's words without leading descriptors and inner `of`/`the`.
fn core(key: &str) -> Vec<&str> {
    let words: Vec<&str> = key.split(' ').filter(|w| !matches!(*w, "of" | "the")).collect();
    let skip = words.iter().take_while(|w| DESCRIPTORS.contains(w)).count().min(words.len().saturating_sub(1));
    words[skip..].to_vec()
}

/// Keys that name one word of a person ("marley", "old marley") and that
/// word is the first or last of exactly one longer name in the chunk
/// ("jacob marley"): short key → long key. Objects are never aliases.
fn aliases_of(forms: &HashMap<String, HashMap<String, usize>>, objects: &HashSet<String>) -> HashMap<String, String> {
    let long: Vec<&String> = forms.keys().filter(|k| core(k).len() >= 2).collect();
    let mut out = HashMap::new();
    for short in forms.keys().filter(|k| core(k).len() == 1 && !objects.contains(*k)) {
        let w = core(short)[0];
        let mut candidates = long.iter().filter(|l| {
            let c = core(l);
            c.first() == Some(&w) || c.last() == Some(&w)
        });
        if let (Some(full), None) = (candidates.next(), candidates.next()) {
            out.insert(short.clone(), (*full).clone());
        }
    }
    out
}

/// Common English diminutives and their given names: "Bob" and "Robert"
/// are one person's first name.
const DIMINUTIVES: &[(&str, &str)] = &[
    ("bob", "robert"),
    ("bobby", "robert"),
    ("rob", "robert"),
    ("robin", "robert"),
    ("bill", "william"),
    ("billy", "william"),
    ("will", "william"),
    ("willie", "william"),
    ("tom", "thomas"),
    ("tommy", "thomas"),
    ("jim", "james"),
    ("jimmy", "james"),
    ("jamie", "james"),
    ("jack", "john"),
    ("johnny", "john"),
    ("dick", "richard"),
    ("rick", "richard"),
    ("ned", "edward"),
    ("ted", "edward"),
    ("eddie", "edward"),
    ("harry", "henry"),
    ("hal", "henry"),
    ("charlie", "charles"),
    ("chuck", "charles"),
    ("fred", "frederick"),
    ("freddie", "frederick"),
    ("sam", "samuel"),
    ("joe", "joseph"),
    ("ben", "benjamin"),
    ("nick", "nicholas"),
    ("tony", "anthony"),
    ("dan", "daniel"),
    ("danny", "daniel"),
    ("mike", "michael"),
    ("tim", "timothy"),
    ("timmy", "timothy"),
    ("kate", "katherine"),
    ("kitty", "katherine"),
    ("katie", "katherine"),
    ("peggy", "margaret"),
    ("meg", "margaret"),
    ("maggie", "margaret"),
    ("bess", "elizabeth"),
    ("betsy", "elizabeth"),
    ("beth", "elizabeth"),
    ("liz", "elizabeth"),
    ("lizzie", "elizabeth"),
    ("sally", "sarah"),
    ("polly", "mary"),
    ("molly", "mary"),
    ("jenny", "jane"),
    ("fanny", "frances"),
    ("annie", "ann"),
];

/// The given name a diminutive stands for ("bob" → "robert"); others as they are.
fn formal(word: &str) -> &str {
    DIMINUTIVES.iter().find(|(d, _)| *d == word).map_or(word, |(_, f)| f)
}

/// Short names resolved across a whole offline graph: a node named by one
/// word ("scrooge", "old marley") folds into the longer name whose first or
/// last word it is ("ebenezer scrooge", "jacob marley") — the only such
/// name, or one with at least twice the chunks of the next. Objects stay.
/// What a language model does when it names a character the same way
/// throughout; the offline extractor sees one chunk at a time. Returns the
/// number of nodes folded.
pub fn resolve_aliases(graph: &mut super::KnowledgeGraph) -> usize {
    // Longer names that differ only by a descriptor ("old jacob marley",
    // "jacob marley") are one: the one in most chunks keeps the others.
    // So are a given name and its diminutive ("bob cratchit", "robert cratchit").
    let mut by_core: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
    for n in graph.nodes.values().filter(|n| n.kind != "object") {
        let c = core(&n.key);
        if c.len() >= 2 {
            let words: Vec<&str> = c.iter().enumerate().map(|(i, w)| if i == 0 { formal(w) } else { w }).collect();
            by_core.entry(words.join(" ")).or_default().push((n.source_chunks.len(), n.key.clone()));
        }
    }
    let mut folds: Vec<(String, String)> = Vec::new();
    for mut same in by_core.into_values().filter(|v| v.len() > 1) {
        same.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.len().cmp(&b.1.len())).then(a.1.cmp(&b.1)));
        folds.extend(same[1..].iter().map(|(_, from)| (from.clone(), same[0].1.clone())));
    }
    graph.absorb_all(&folds);
    let folded = folds.len();
    // One-word names: the longer names whose (formal) first word or last
    // word it is, found through an index of both rather than by scanning
    // every longer name for every short one.
    let mut long: Vec<(&str, usize)> = Vec::new();
    let mut by_first: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut by_last: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut short: Vec<(&str, &str)> = Vec::new();
    for n in graph.nodes.values().filter(|n| n.kind != "object") {
        let c = core(&n.key);
        match c.as_slice() {
            [w] => short.push((n.key.as_str(), w)),
            [first, .., last] => {
                by_first.entry(formal(first)).or_default().push(long.len());
                by_last.entry(last).or_default().push(long.len());
                long.push((n.key.as_str(), n.source_chunks.len()));
            }
            [] => {}
        }
    }
    let mut folds: Vec<(String, String)> = Vec::new();
    for (key, w) in short {
        let mut found: Vec<usize> =
            by_first.get(formal(w)).into_iter().chain(by_last.get(w)).flatten().copied().collect();
        found.sort_unstable();
        found.dedup();
        let mut candidates: Vec<&(&str, usize)> = found.iter().map(|&i| &long[i]).collect();
        candidates.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let chosen = match candidates.as_slice() {
            [only] => Some(only),
            [first, second, ..] if first.1 >= 2 * second.1 => Some(first),
            _ => None,
        };
        if let Some((into, _)) = chosen {
            folds.push((key.to_string(), into.to_string()));
        }
    }
    graph.absorb_all(&folds);
    // `concept` is the extractor's "no cue": a chunk's cue decides.
    graph.settle_kinds("concept");
    folded + folds.len()
}

fn truncate(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(max_chars).collect::<String>().trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::{chunk_text, ChunkSettings};
    use crate::graph::KnowledgeGraph;

    #[test]
    fn names_types_and_relations_from_a_small_text() {
        let text = "The Salt Guild met at the Anchor Inn. Isobel Pell was the first warden of the Salt Guild. \
                    Judge Eleanor Whitcombe heard the case at Hollin Cross. 'It is settled,' said Samuel Corrigan. \
                    The chain crossed the River Oll. The next day the chain was gone, and the chain was never seen again.";
        let x = extract(text);
        let kinds: BTreeMap<&str, &str> = x.entities.iter().map(|e| (e.name.as_str(), e.kind.as_str())).collect();
        assert_eq!(kinds.get("Salt Guild"), Some(&"organization"));
        assert_eq!(kinds.get("Anchor Inn"), Some(&"location"));
        assert_eq!(kinds.get("Hollin Cross"), Some(&"location"));
        assert_eq!(kinds.get("River Oll"), Some(&"location"));
        assert_eq!(kinds.get("Judge Eleanor Whitcombe"), Some(&"person"));
        assert_eq!(kinds.get("Samuel Corrigan"), Some(&"person"));
        assert_eq!(kinds.get("Isobel Pell"), Some(&"concept"), "no cue says she is a person in this text");
        assert_eq!(kinds.get("chain"), Some(&"object"), "a frequent noun phrase");
        assert!(!kinds.contains_key("The") && !kinds.contains_key("It"), "{kinds:?}");
        let guild_inn = x.relations.iter().find(|r| r.source == "Anchor Inn" && r.target == "Salt Guild").unwrap();
        assert_eq!(guild_inn.description, "The Salt Guild met at the Anchor Inn.");
        assert_eq!(guild_inn.strength, 1.0);
    }

    /// Texts that write a dash as "--" gave entities like
    /// "Holmes--and"; a character's full and short names made two nodes;
    /// main characters were typed "concept".
    #[test]
    fn dashes_possessives_and_short_names_make_one_person() {
        let text = "Ebenezer Scrooge sat alone in his counting-house. Scrooge signed it--and Scrooge's name was good \
                    upon 'Change. \"Bah,\" said Scrooge. Jacob Marley was dead. Old Marley was as dead as a door-nail. \
                    Scrooge knew Marley was dead--Marley's name stood there. Mr. Fezziwig danced. Fezziwig laughed.";
        let x = extract(text);
        let kinds: BTreeMap<&str, &str> = x.entities.iter().map(|e| (e.name.as_str(), e.kind.as_str())).collect();
        assert!(kinds.keys().all(|n| !n.contains("--") && !n.contains('—') && !n.ends_with("'s")), "{kinds:?}");
        assert_eq!(
            kinds.get("Ebenezer Scrooge"),
            Some(&"person"),
            "'said Scrooge' makes the full name a person: {kinds:?}"
        );
        assert!(!kinds.contains_key("Scrooge") && !kinds.contains_key("Scrooge Scrooge"), "{kinds:?}");
        assert!(kinds.contains_key("Jacob Marley") && !kinds.contains_key("Marley"), "{kinds:?}");
        assert_eq!(kinds.get("Fezziwig"), Some(&"person"), "a title before the name");
        // The alias's sentences relate the full name.
        assert!(
            x.relations.iter().any(|r| {
                (r.source == "Ebenezer Scrooge" && r.target == "Jacob Marley")
                    || (r.source == "Jacob Marley" && r.target == "Ebenezer Scrooge")
            }),
            "{:?}",
            x.relations
        );
        // Two longer names ending alike leave the short one alone.
        let two = extract("Jacob Marley came. Jacob Scrooge went. Then Jacob stayed, said Jacob Marley.");
        assert!(two.entities.iter().any(|e| e.name == "Jacob"), "{:?}", two.entities);
    }

    /// Across a real text (A Christmas Carol, stave one, 1,200-token
    /// chunks): one node per character, typed person; no name glued to a
    /// dash or a possessive.
    #[test]
    fn a_christmas_carol_has_one_scrooge_and_one_marley() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora/christmas_carol_stave1.txt");
        let text = std::fs::read_to_string(path).unwrap().replace("\r\n", "\n");
        let mut graph = KnowledgeGraph::default();
        for c in chunk_text(&text, &ChunkSettings::default()).unwrap() {
            graph.merge(c.index as i64, &extract(&text[c.start..c.end]));
        }
        let chunks = graph.nodes.values().map(|n| n.source_chunks.len()).max().unwrap();
        let scrooges_before = graph.nodes.keys().filter(|k| k.split(' ').any(|w| w == "scrooge")).count();
        let folded = resolve_aliases(&mut graph);
        assert!(folded > 0);
        let scrooges: Vec<&String> = graph.nodes.keys().filter(|k| k.split(' ').any(|w| w == "scrooge")).collect();
        println!("Scrooge nodes before resolving aliases: {scrooges_before}; folded {folded}");
        assert_eq!(scrooges, ["ebenezer scrooge"], "was {scrooges_before} nodes");
        let scrooge = &graph.nodes["ebenezer scrooge"];
        assert_eq!(scrooge.kind, "person");
        assert!(
            scrooge.source_chunks.len() >= chunks - 1,
            "Scrooge is in nearly every chunk: {}",
            scrooge.source_chunks.len()
        );
        let marleys: Vec<&String> = graph.nodes.keys().filter(|k| k.split(' ').any(|w| w == "marley")).collect();
        assert_eq!(marleys, ["jacob marley"]);
        assert_eq!(graph.nodes["jacob marley"].kind, "person", "'Old Marley' says Marley is a person");
        assert!(graph.nodes.keys().all(|k| !k.contains("--") && !k.ends_with("'s")));
        assert!(graph.edges.keys().all(|(a, b)| a != b && graph.nodes.contains_key(a) && graph.nodes.contains_key(b)));
    }

    /// The scanning form the indexed one replaced: every short name against
    /// every longer one, every fold a scan of every edge.
    fn resolve_aliases_by_scanning(graph: &mut KnowledgeGraph) {
        fn absorb(g: &mut KnowledgeGraph, from: &str, into: &str) {
            if from == into || !g.nodes.contains_key(into) {
                return;
            }
            let Some(gone) = g.nodes.remove(from) else { return };
            let node = g.nodes.get_mut(into).unwrap();
            node.source_chunks.extend(gone.source_chunks);
            for d in &gone.descriptions {
                crate::graph::push_distinct(&mut node.descriptions, d);
            }
            for (kind, n) in gone.kinds {
                *node.kinds.entry(kind).or_default() += n;
            }
            node.kind = crate::graph::most_common(&node.kinds);
            let moved: Vec<(String, String)> =
                g.edges.keys().filter(|(a, b)| a == from || b == from).cloned().collect();
            for pair in moved {
                let old = g.edges.remove(&pair).unwrap();
                let other = if pair.0 == from { &pair.1 } else { &pair.0 };
                if other == into {
                    continue;
                }
                let edge = g.edge_between(into, other);
                for d in &old.descriptions {
                    crate::graph::push_distinct(&mut edge.descriptions, d);
                }
                edge.keywords.extend(old.keywords);
                edge.weight += old.weight;
                edge.source_chunks.extend(old.source_chunks);
            }
        }
        let mut by_core: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
        for n in graph.nodes.values().filter(|n| core(&n.key).len() >= 2 && n.kind != "object") {
            let words: Vec<&str> =
                core(&n.key).iter().enumerate().map(|(i, w)| if i == 0 { formal(w) } else { w }).collect();
            by_core.entry(words.join(" ")).or_default().push((n.source_chunks.len(), n.key.clone()));
        }
        for mut same in by_core.into_values().filter(|v| v.len() > 1) {
            same.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.len().cmp(&b.1.len())).then(a.1.cmp(&b.1)));
            for (_, from) in &same[1..] {
                absorb(graph, from, &same[0].1);
            }
        }
        let long: Vec<(String, usize)> = graph
            .nodes
            .values()
            .filter(|n| core(&n.key).len() >= 2 && n.kind != "object")
            .map(|n| (n.key.clone(), n.source_chunks.len()))
            .collect();
        let mut folds: Vec<(String, String)> = Vec::new();
        for n in graph.nodes.values().filter(|n| core(&n.key).len() == 1 && n.kind != "object") {
            let w = core(&n.key)[0];
            let mut candidates: Vec<&(String, usize)> = long
                .iter()
                .filter(|(k, _)| {
                    let c = core(k);
                    c.first().is_some_and(|f| formal(f) == formal(w)) || c.last() == Some(&w)
                })
                .collect();
            candidates.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let chosen = match candidates.as_slice() {
                [only] => Some(only),
                [first, second, ..] if first.1 >= 2 * second.1 => Some(first),
                _ => None,
            };
            if let Some((into, _)) = chosen {
                folds.push((n.key.clone(), into.clone()));
            }
        }
        for (from, into) in &folds {
            absorb(graph, from, into);
        }
        graph.settle_kinds("concept");
    }

    /// The indexed resolution makes the very graph the scanning one made —
    /// the same nodes, edges, and descriptions in the same order — on the
    /// real novels (Sherlock Holmes, Alice, A Christmas Carol as one corpus).
    #[test]
    fn indexed_alias_resolution_makes_the_scanning_ones_graph() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora");
        let mut graph = KnowledgeGraph::default();
        let mut chunk = 0;
        for name in ["sherlock_holmes.txt", "alice_in_wonderland.txt", "christmas_carol_stave1.txt"] {
            let text = std::fs::read_to_string(format!("{dir}/{name}")).unwrap().replace("\r\n", "\n");
            for c in chunk_text(&text, &ChunkSettings::default()).unwrap() {
                graph.merge(chunk, &extract(&text[c.start..c.end]));
                chunk += 1;
            }
        }
        let mut scanned = graph.clone();
        let folded = resolve_aliases(&mut graph);
        resolve_aliases_by_scanning(&mut scanned);
        assert!(folded > 50, "{folded}");
        assert_eq!(graph.nodes.len(), scanned.nodes.len());
        assert_eq!(graph.edges.len(), scanned.edges.len());
        assert!(graph == scanned, "the graphs differ");
    }

    /// A diminutive and its given name, alone or with the surname, are one
    /// person: "Robert Cratchit", "Bob Cratchit", "Bob" and "Cratchit".
    #[test]
    fn a_diminutive_is_the_same_person() {
        let mut graph = KnowledgeGraph::default();
        let chunks = [
            "Mr. Robert Cratchit kept the books. Robert Cratchit said nothing.",
            "Bob Cratchit warmed his hands. 'Yes,' said Bob Cratchit.",
            "Then Bob went home. Then Bob ran.",
            "Then Cratchit laughed. Then Cratchit sang, said Cratchit.",
            "Then Bob Cratchit sang again.",
        ];
        for (i, c) in chunks.iter().enumerate() {
            graph.merge(i as i64, &extract(c));
        }
        resolve_aliases(&mut graph);
        let people: Vec<&String> =
            graph.nodes.keys().filter(|k| k.contains("cratchit") || *k == "bob" || *k == "robert").collect();
        assert_eq!(people.len(), 1, "{:?}", graph.nodes.keys().collect::<Vec<_>>());
        assert_eq!(graph.nodes[people[0]].source_chunks.len(), 5);
        assert_eq!(graph.nodes[people[0]].kind, "person");
        assert_eq!(formal("bob"), "robert");
        assert_eq!(formal("alice"), "alice");
    }

    #[test]
    fn sentence_initial_capitals_need_evidence() {
        let x = extract("Suddenly the door opened. Nobody came. Alice waited, and Alice sat down by Dinah.");
        let names: Vec<&str> = x.entities.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["Alice", "Dinah"]);
    }

    #[test]
    fn alice_in_wonderland_gives_a_graph_of_its_characters() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora/alice_in_wonderland.txt");
        let text = std::fs::read_to_string(path).unwrap().replace("\r\n", "\n");
        let mut graph = KnowledgeGraph::default();
        for c in chunk_text(&text, &ChunkSettings::default()).unwrap() {
            graph.merge(c.index as i64, &extract(&text[c.start..c.end]));
        }
        let top: Vec<String> = graph.by_degree().into_iter().take(15).map(|(k, _)| k).collect();
        for character in ["alice", "queen", "king", "hatter", "mock turtle", "gryphon"] {
            assert!(top.iter().any(|k| k == character), "{character} is not among the top 15: {top:?}");
        }
        for junk in ["the", "chapter", "i", "she", "it", "said", "and", "you", "oh", "well"] {
            assert!(!graph.nodes.contains_key(junk), "stop-word node {junk}");
        }
        assert!(graph.nodes.keys().all(|k| k.chars().count() >= 2), "one-letter nodes");
        let alice = &graph.nodes["alice"];
        assert!(alice.source_chunks.len() >= 35, "Alice is in most chunks: {}", alice.source_chunks.len());
        assert_eq!(graph.nodes["hatter"].kind, "person", "the Hatter speaks");
    }
}
