//! Explanations in place: the two papers Assay implements, cited by title
//! with their arXiv links, and a "?" beside each setting and metric that
//! says what it is, how it is computed and where its default comes from
//! (a tooltip on hover; a tap or click opens it inline, so it works on
//! touch and before the page hydrates).

use leptos::prelude::*;

/// A paper Assay implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paper {
    /// Zeng et al. 2025: graph-text-grounded questions, the unbiased judge.
    Unbiased,
    /// Dhole et al. 2026: HieraRAG, hierarchical question categories.
    HieraRag,
}

impl Paper {
    pub fn title(self) -> &'static str {
        match self {
            Paper::Unbiased => {
                "How Significant Are the Real Performance Gains? An Unbiased Evaluation Framework for GraphRAG"
            }
            Paper::HieraRag => {
                "How Fine-Grained Should a RAG Benchmark Be? A Hierarchical Framework for Synthetic Question Generation"
            }
        }
    }

    /// How the interface names it in running text.
    pub fn short(self) -> &'static str {
        match self {
            Paper::Unbiased => "the Unbiased GraphRAG Evaluation paper (Zeng et al., 2025)",
            Paper::HieraRag => "the HieraRAG paper (Dhole et al., 2026)",
        }
    }

    pub fn url(self) -> &'static str {
        match self {
            Paper::Unbiased => "https://arxiv.org/abs/2506.06331",
            Paper::HieraRag => "https://arxiv.org/abs/2606.12789",
        }
    }
}

/// A citation: the paper's short name linked to arXiv (its full title on
/// hover), and where in it (`at`: a section's name, a table).
#[component]
pub fn Cite(paper: Paper, #[prop(optional, into)] at: Option<String>) -> impl IntoView {
    view! {
        <a class="cite" href=paper.url() target="_blank" rel="noopener" title=paper.title()>{paper.short()}</a>
        {at.map(|a| format!(", {a}"))}
    }
}

/// A "?" that explains `text` (hover: a tooltip; tap or click: inline).
#[component]
pub fn Help(#[prop(into)] text: String) -> impl IntoView {
    view! {
        <details class="help">
            <summary title=text.clone() aria-label="What is this?">"?"</summary>
            <span class="help-text">{text}</span>
        </details>
    }
}

/// The explanations, one per setting or metric: what it is, its
/// definition, and the default's source.
pub mod text {
    // The glossary: every term the pages use that a researcher may
    // not know, explained once, here, and shown as a "?" beside it.
    pub const GLEANING: &str = "Gleaning turns: after extracting a chunk's entities and relations, the model is asked this many times more for the ones it missed (\"identify the missing entities and add them\"): the Unbiased GraphRAG Evaluation paper's deeper mining (§III-A), LightRAG's entity_extract_max_gleaning. Each turn is one more call per chunk.";
    pub const SUMMARY_BUDGET: &str = "Summary budget: an entity or relation found in many chunks gathers a description from each; when they add up to more than this many tokens, the model rewrites them as one description within it (LightRAG's summary_max_tokens, 500). Offline, the longest sentences are kept.";
    pub const NO_CACHE: &str = "Every reply is kept in Assay's cache, keyed by the exact request: running a stage again asks the model nothing it already answered. Bypassing the cache sends every call again (and pays for it), for a fresh sample of a model's replies.";
    pub const MENTIONS: &str = "Entity listing (a \"mentions\" job): the model lists the entities each question names, to compare question sets by what they ask about (the Unbiased GraphRAG Evaluation paper's Fig. 9).";
    pub const STUDY_RATING: &str = "LLM rating (a \"study_rating\" job): the configured model rates a study's items with the human raters' rubric, so its agreement with the humans can be measured (Cohen's κ, Spearman's ρ).";
    pub const SIGMA_SIB: &str = "σ_sib (sibling spread): the standard deviation of the children categories' mean cosine similarity — how differently the finer categories of one parent behave (the HieraRAG paper, §3).";
    pub const DELTA_VERT: &str = "δ_vert (vertical drift): |the parent's mean cosine similarity − the mean of its children's| — how far splitting a category moves away from it (the HieraRAG paper, §3).";
    pub const LEVEL: &str = "A hierarchical question's level: its dimension — QC question complexity, AT answer type, LV linguistic variation — and how many categories that dimension was cut into (2, 4 or 8): \"QC 8\" is a question among Question Complexity's 8 fine categories (the HieraRAG paper, §2.2).";
    pub const TRIALS: &str = "M, trials: the whole comparison (every question, both orders, N judgments each) is run M times; the box plots show the spread of the win rates over the trials and the headline is the median trial. Default 25, the Unbiased GraphRAG Evaluation paper's (§IV-B, trial statistics).";
    pub const REPEATS: &str = "N, judgments per order: each order (A first, B first) is judged N times and its scores averaged, against the judge's randomness. Default 2, the Unbiased GraphRAG Evaluation paper's (§IV-B).";
    pub const TOLERANCE: &str = "Tolerance: answers whose lengths differ by at most this many words count as aligned. Default 10 words, the Unbiased GraphRAG Evaluation paper's (§IV-B, length alignment: \"observed to have a negligible impact\").";
    pub const ADJUSTMENTS: &str = "Adjustments: how many times the shorter answer is regenerated with the longer one's length as its target before a forced append; pairs still apart after that are discarded. Default 3 (the paper says \"several length adjustments\" without a number; 3 is ours).";
    pub const RANGE: &str = "HieraRAG's Table 1: the largest minus the smallest of the dimension's coarse categories' mean cosine similarity. It says how far apart the easiest and the hardest category sit; unlike the discriminative power it looks only at the extremes.";
    pub const LEGACY_ASPECTS: &str = "The aspects the legacy protocol's judge picks a winner on: LightRAG's evaluation prompt asks for Comprehensiveness, Diversity and Empowerment; the GraphRAG paper's adds Directness (how specifically and clearly the answer addresses the question). Each is an overall winner's input; the report breaks the verdicts down by aspect.";
    pub const JUDGE_TEMPERATURE: &str = "The temperature every judging request goes out at, both protocols. Empty: none is sent and the model uses its own default (Zeng et al. name none). Repeats and trials are meant to be independent draws, so a temperature of 0 makes them copies of one judgment on most servers. Evaluations made before this setting existed ran at 1 and say so.";
    pub const SANITY_FIRST: &str = "A sanity check answers the questions again with a method and judges the two runs against each other under both protocols: an unbiased protocol should call them even. Each method never checked in this project gets one, a job of its own, as many calls as an evaluation of one pair plus answering every question again: the price below counts them.";
    pub const ALIGN: &str = "Length alignment: the shorter answer of each pair is regenerated to the longer one's length (within the tolerance), so a judge that prefers longer answers cannot. The Unbiased GraphRAG Evaluation paper, §IV-B.";
    pub const EXCHANGE: &str = "Position exchange: every draw is judged with A shown first and with B shown first, and each answer's score is its average over both, so a judge that prefers the first answer cannot. The Unbiased GraphRAG Evaluation paper, §IV-B.";
    pub const SEQUENTIAL: &str = "Sequential trials: each pair is judged look by look (M split into up to 5 looks) and stops once its verdict is settled — the relative win rate's interval inside ±0.05 (even) or entirely outside it (differs). Each look spends a fifth of the 5% error rate, so the repeated looks do not inflate false verdicts. A clearly better or worse pair stops after a fifth of the trials; the price below shows the range.";
    pub const JURY: &str = "A jury: judges besides the one chosen above, each judging every item of the unbiased protocol (so the judging calls multiply by the number of judges; the price below counts them). One per line or separated by ';': offline — the rubric judge; llm:MODEL — another model at the configured endpoint; simulated:position=0.6,length=0,noise=1 — a bias-lab judge (unnamed biases as set here; each its own seed). The headline becomes the jury's mean score; the report adds each judge's verdicts, the majority's, Fleiss' κ and Krippendorff's α between them, and, where an answer-validation study rated both answer sets, each judge's agreement with the people (Verga et al., 2024, \"Replacing Judges with Juries\").";
    pub const POSITION_BIAS: &str = "Position bias (bias lab): points added to the score of the answer shown first, on the 0–5 scale of each aspect. 0 is an unbiased judge; default 0.3.";
    pub const LENGTH_BIAS: &str = "Length bias (bias lab): points added per 10 words the answer is longer than the other. 0 is an unbiased judge; default 0.1.";
    pub const NOISE: &str = "Noise (bias lab): the standard deviation of random points added to each score, the judge's inconsistency between calls. Default 0.5.";
    pub const RELATIVE: &str = "Relative win rate of A over B: (A wins − B wins) / (A wins + B wins + ties), from −1 (B always wins) to +1 (A always wins); 0 is even. The Unbiased GraphRAG Evaluation paper, Fig. 16.";
    pub const K: &str = "k: retrieval is scored on each method's top k retrieved chunks (nDCG@k, Recall@k). Default 10, the HieraRAG paper's (§2.4).";
    pub const BINS: &str = "Bins: cosine similarity is cut into this many equal-frequency performance bins for the normalised mutual information with the categories. Default 4 (the HieraRAG paper does not give its number).";
    pub const DISCPOW: &str = "Discriminative power (DiscPow): the standard deviation of the mean cosine similarity across the categories of a granularity level; higher means the categories tell performance apart. The HieraRAG paper, §2.4.";
    pub const NMI: &str = "NMI: normalised mutual information between the questions' categories and their performance bins (arithmetic normalisation, as scikit-learn); 0 says the category tells nothing about performance, 1 says everything. The HieraRAG paper, §2.4.";
    pub const RHO: &str = "ρ, the Coherence Ratio of a split: σ_sib / (δ_vert + 0.001), the spread of cosine similarity across sibling categories over the parent's distance from their mean. ρ > 2 is a discriminative but aligned split, ρ < 1 a poor one. The HieraRAG paper, §2.4, eq. 1.";
    pub const KAPPA: &str = "Fleiss' κ: agreement between raters beyond chance over items rated by the same number of raters; 1 is perfect, 0 is chance. Over the items rated by the most common number of raters.";
    pub const ALPHA: &str = "Krippendorff's α: agreement between raters beyond chance, ordinal (nominal for a category pick), over every item with two or more ratings; 1 is perfect, 0 is chance.";
}

#[cfg(test)]
mod tests {
    use super::text;
    use crate::model::defaults as d;

    /// Each setting's help names the default its form starts from (the
    /// engine's: both read `types::defaults`).
    #[test]
    fn every_help_text_names_its_forms_default() {
        for (help, default) in [
            (text::TRIALS, format!("Default {}", d::TRIALS)),
            (text::REPEATS, format!("Default {}", d::REPEATS)),
            (text::TOLERANCE, format!("Default {} words", d::TOLERANCE)),
            (text::ADJUSTMENTS, format!("Default {}", d::ADJUSTMENTS)),
            (text::POSITION_BIAS, format!("default {}", d::POSITION_BIAS)),
            (text::LENGTH_BIAS, format!("default {}", d::LENGTH_BIAS)),
            (text::NOISE, format!("Default {}", d::NOISE)),
            (text::K, format!("Default {}", d::METRICS_K)),
            (text::BINS, format!("Default {}", d::METRICS_BINS)),
        ] {
            assert!(
                help.contains(&format!("{default} "))
                    || help.contains(&format!("{default},"))
                    || help.contains(&format!("{default}.")),
                "{help} does not say {default}"
            );
        }
    }
}
