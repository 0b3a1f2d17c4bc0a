//! Evaluations: the report, its rows and the drill-down.

use serde::{Deserialize, Serialize};

use super::JobStatus;

/// An evaluation as lists and headers show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluationView {
    pub id: i64,
    pub project_id: i64,
    pub question_set_id: i64,
    pub question_set: String,
    pub job_id: Option<i64>,
    pub name: String,
    /// Who judged, as the report states it.
    pub judge: String,
    pub protocol: types::Protocol,
    pub trials: u32,
    pub repeats: u32,
    pub tolerance: u32,
    pub align: bool,
    pub exchange: bool,
    pub sanity: bool,
    /// The unbiased protocol's scoring prompt and the first 12 hex digits
    /// of its SHA-256 (as in the call log).
    pub judge_prompt: types::JudgePrompt,
    pub judge_prompt_hash: String,
    /// The judging temperature in words ("1", "the model's default (none sent)").
    #[serde(default)]
    pub judge_temperature: String,
    /// The legacy protocol's aspects in words ("LightRAG's 3 aspects (…)").
    #[serde(default)]
    pub legacy_aspects: String,
    /// The simulated judge's biases, when it judged: "position +0.3, …".
    pub biases: Option<String>,
    /// The compared answer sets' names, in order.
    pub contenders: Vec<String>,
    /// Sequential trials: each pair stopped once settled, M at most.
    #[serde(default)]
    pub sequential: bool,
    /// Judges of each unbiased item: 1, or a jury's.
    #[serde(default = "one_judge")]
    pub judges: u32,
    pub pairs: usize,
    /// The job's status (`None`: its job is gone) and progress.
    pub status: Option<JobStatus>,
    pub done: i64,
    /// Items that failed (finished, as the job page counts them).
    #[serde(default)]
    pub failed: i64,
    pub total: i64,
    pub tokens: i64,
    pub cost_usd: f64,
    pub created_at: String,
}

fn one_judge() -> u32 {
    1
}

impl EvaluationView {
    /// Whether the unbiased protocol ran (alone or beside the legacy one).
    pub fn unbiased(&self) -> bool {
        self.protocol.unbiased()
    }

    /// Whether the legacy protocol ran.
    pub fn legacy(&self) -> bool {
        self.protocol.legacy()
    }

    /// The settings that were run, in words: a legacy-only evaluation has
    /// no trials, repeats, alignment or exchange, so none are named.
    pub fn settings_text(&self) -> String {
        let legacy = format!(
            "legacy protocol: one verdict per question, A shown first, a winner forced{}",
            if self.legacy_aspects.is_empty() { String::new() } else { format!(", on {}", self.legacy_aspects) }
        );
        if !self.unbiased() {
            return format!("{legacy} · judge temperature {}", self.judge_temperature);
        }
        let unbiased = format!(
            "unbiased protocol: M = {}{} · N = {} per order · {} · {} · tolerance {} words · scoring prompt {} (sha256 {}) · judge temperature {}",
            crate::format::count(self.trials as i64, "trial"),
            if self.sequential { " at most (sequential: each pair stops once settled)" } else { "" },
            self.repeats,
            if self.align { "length alignment on" } else { "length alignment OFF" },
            if self.exchange { "position exchange on" } else { "position exchange OFF" },
            self.tolerance,
            self.judge_prompt,
            self.judge_prompt_hash,
            self.judge_temperature
        ) + &if self.judges > 1 {
            format!(" · a jury of {} judges, the headline their mean score", self.judges)
        } else {
            String::new()
        };
        if self.legacy() {
            format!("{unbiased}; and the {legacy}")
        } else {
            unbiased
        }
    }

    /// The settings in a few words, for lists.
    pub fn settings_short(&self) -> String {
        if !self.unbiased() {
            return "legacy only · one verdict per question".to_string();
        }
        format!(
            "{} · {}{} × {}{}{}{}",
            if self.legacy() { "unbiased and legacy" } else { "unbiased" },
            if self.sequential { "up to " } else { "" },
            crate::format::count(self.trials as i64, "trial"),
            crate::format::count(self.repeats as i64, "repeat"),
            if self.align { "" } else { " · no alignment" },
            if self.exchange { "" } else { " · no exchange" },
            if self.judges > 1 { format!(" · a jury of {}", self.judges) } else { String::new() }
        )
    }
}

/// One pair's row of an evaluation report, numbers as computed (rates in
/// 0–1); the page formats them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairRowView {
    pub a: i64,
    pub b: i64,
    pub a_name: String,
    pub b_name: String,
    pub questions: usize,
    /// As is, regenerated, forced, discarded; success rate (`None`: alignment off).
    pub aligned: (usize, usize, usize, usize),
    pub alignment_success: Option<f64>,
    /// Unbiased: trials; the median trial (by relative win rate) and its
    /// A-win, tie and B-win rates and relative win rate, each with its 95%
    /// bootstrap interval over questions (see `engine::judge::eval::UnbiasedSummary`).
    pub trials: usize,
    pub median_trial: Option<u32>,
    pub a_win: Option<(f64, (f64, f64))>,
    pub tie: Option<(f64, (f64, f64))>,
    pub b_win: Option<(f64, (f64, f64))>,
    pub relative: Option<(f64, (f64, f64))>,
    /// Each rate's own median over the trials (A wins, ties, B wins): what
    /// the box plots' middle lines show. They need not add up to 100% nor
    /// be one trial's; the headline above is the median trial's.
    #[serde(default)]
    pub medians: Option<(f64, f64, f64)>,
    /// Mean total-score difference A − B; Wilcoxon and sign test p (raw, Holm).
    pub mean_difference: Option<f64>,
    pub wilcoxon: Option<(f64, f64)>,
    pub sign: Option<(f64, f64)>,
    /// Legacy: A's and B's win rates, relative.
    pub legacy: Option<(f64, f64, f64)>,
    /// Stacked bars: per aspect, per level, legacy beside unbiased (none
    /// where the protocol that was run has none: levels are the unbiased
    /// protocol's).
    pub aspects_plot: Option<Figure>,
    pub levels_plot: Option<Figure>,
    pub legacy_plot: Option<Figure>,
}

/// One of a report's plots: its SVG inline (the one-file export, an
/// experiment's report), or linked by its name — a page's browser fetches
/// `…/plots/NAME.svg` on its own, so the page's HTML does not carry it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Figure {
    Inline(String),
    Linked,
}

/// A box as drawn: the whiskers (the lowest and highest trial within 1.5
/// IQR of the quartiles), the quartiles and the median of one rate over the
/// trials, and how many trials lie beyond the whiskers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoxView {
    pub low: f64,
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub high: f64,
    pub outliers: usize,
}

/// Fig. 14's numbers for one pair: each rate's own box over the trials,
/// and the median trial's rates (the headline) beside them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaperBoxRow {
    pub a_name: String,
    pub b_name: String,
    pub trials: usize,
    pub a_win: BoxView,
    pub tie: BoxView,
    pub b_win: BoxView,
    pub relative: BoxView,
    pub median_trial: u32,
    /// The median trial's A wins, ties, B wins and relative win rate.
    pub headline: (f64, f64, f64, f64),
}

/// One row of rates in a paper-view table: its label, A wins, ties, B
/// wins, the relative win rate and how many outcomes (or pairs) it counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatesRow {
    pub label: String,
    pub a_win: f64,
    pub tie: f64,
    pub b_win: f64,
    pub relative: f64,
    pub n: usize,
    /// The pair a Fig. 17 row counts (`None`: an aspect, or the mean).
    #[serde(default)]
    pub pair: Option<(String, String)>,
}

/// A panel of Fig. 15 (one pair, per aspect) or Fig. 17 (one question
/// level, every pair and their mean): its plot and the numbers it draws.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaperPanel {
    pub title: String,
    /// The plot's name (`…/plots/NAME.svg`).
    pub plot: String,
    pub figure: Option<Figure>,
    pub rows: Vec<RatesRow>,
    /// A Fig. 15 panel's pair (`None`: a Fig. 17 level).
    #[serde(default)]
    pub pair: Option<(String, String)>,
}

/// The paper view (seed 000 §VI-C): its results figures as the paper lays
/// them out, each with the numbers it draws. Empty when the unbiased
/// protocol was not run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PaperView {
    pub boxes: Vec<PaperBoxRow>,
    pub aspects: Vec<PaperPanel>,
    /// The heatmap's rows: a contender and its relative win rate over each
    /// column's (the median trial's), `None` where not judged.
    pub matrix: Vec<(String, Vec<Option<f64>>)>,
    pub levels: Vec<PaperPanel>,
}

/// An evaluation's report as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluationReportView {
    pub evaluation: EvaluationView,
    /// The unbiased protocol's plots; `None` when it was not run.
    pub box_plot: Option<Figure>,
    pub heatmap: Option<Figure>,
    /// The legacy protocol's heatmap; `None` when it was not run.
    pub legacy_heatmap: Option<Figure>,
    pub pairs: Vec<PairRowView>,
    /// The sanity check's sentence, and whether it came out even.
    pub sanity: Option<(String, Option<bool>)>,
    /// The bias audit: (what, value, how many it counts), the rows the
    /// protocol that was run can fill.
    pub bias: Vec<(String, String, String)>,
    /// What the audit's rates mean for this judge, a sentence per bias.
    #[serde(default)]
    pub bias_verdicts: Vec<String>,
    /// How well a language-model judge could be read (its items that
    /// failed, were cut or repaired, and its position consistency), and
    /// whether that is poor enough to doubt the rates; `None` for the
    /// offline and simulated judges.
    #[serde(default)]
    pub judge_reading: Option<(String, bool)>,
    /// Why the report has no rates at all, when it has none.
    #[serde(default)]
    pub no_verdict: Option<String>,
    /// The contenders whose answers rest on little or no retrieved text
    ///, in words, and whether it is a warning.
    #[serde(default)]
    pub thin_context: Vec<(String, bool)>,
    /// Calls of the evaluation itself: made, answered from the cache.
    pub calls: i64,
    pub cached_calls: i64,
    /// The paper view's figures and numbers.
    #[serde(default)]
    pub paper: PaperView,
    /// Bradley–Terry scores of every method (unbiased protocol).
    #[serde(default)]
    pub ranking: Option<Ranking>,
    /// Per pair, the length-controlled win rate beside the raw one and
    /// length alignment by regeneration (unbiased protocol).
    #[serde(default)]
    pub length_control: Vec<LengthControlRow>,
    /// With sequential trials: where each pair stopped.
    #[serde(default)]
    pub sequential: Vec<SequentialRow>,
    /// With a jury: each judge's verdicts, the jury's, their agreement.
    #[serde(default)]
    pub jury: Option<JuryView>,
}

/// A jury's report as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JuryView {
    /// The rule of the headline's verdict ("mean score").
    pub rule: String,
    /// The pairs, "A vs B", in the rows' cells' order.
    pub pairs: Vec<String>,
    /// Each judge's row, then the jury's (mean score, majority).
    pub rows: Vec<JuryRowView>,
    /// Items every judge judged, and the agreement over them.
    pub items: usize,
    pub fleiss_kappa: Option<f64>,
    pub krippendorff_alpha: Option<f64>,
    pub people: Option<People>,
}

/// One judge's (or a jury rule's) verdicts, a cell per pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JuryRowView {
    pub label: String,
    /// A jury rule's row (not one judge's).
    pub jury: bool,
    pub cells: Vec<Option<JuryCell>>,
}

/// A pair's median-trial rates under one judge (or rule).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JuryCell {
    pub a_win: f64,
    pub tie: f64,
    pub b_win: f64,
    pub relative: f64,
    pub items: usize,
}

pub use types::judge::{Cell, People, PeopleRow, RankRow, Ranking};

/// One pair under sequential trials: the looks it took, the verdict it
/// stopped at, and the judging calls it made against all M trials'.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequentialRow {
    pub a_name: String,
    pub b_name: String,
    pub questions: usize,
    /// Trials judged per question when it stopped, of M.
    pub trials: u32,
    pub m: u32,
    pub looks: usize,
    pub of_looks: usize,
    pub standing: types::Standing,
    /// The trial-mean relative win rate and its interval at the last look.
    pub estimate: f64,
    pub interval: (f64, f64),
    pub calls: u64,
    pub calls_fixed: u64,
}

/// One pair's length-controlled win rate (AlpacaEval 2's regression):
/// A preferred over B at equal length and balanced order, ties half.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LengthControlRow {
    pub a: i64,
    pub b: i64,
    pub a_name: String,
    pub b_name: String,
    pub judgments: usize,
    pub questions: usize,
    /// A's share of the judgments, ties half.
    pub raw: f64,
    /// The paper's fit (maximum likelihood) and its 95% interval.
    pub paper: Option<f64>,
    pub paper_ci: Option<(f64, f64)>,
    /// AlpacaEval's code (L1, C by 5-fold cross-validation) and its C.
    pub code: Option<f64>,
    pub code_c: Option<f64>,
    /// The paper fit's weights on the length difference and the position.
    pub length_weight: Option<f64>,
    pub position_weight: Option<f64>,
    /// Why there is no paper fit.
    pub why: Option<String>,
    /// Length alignment by regeneration on the same pair: where it was done
    /// (this evaluation, or — on the project's own page, never through a
    /// share link or in a download — another of the same answers), and the
    /// relative win rate it gave (the median trial's), beside 2 · LC − 1.
    pub alignment: Option<(String, f64)>,
    /// Whether this evaluation's answers were length-aligned before judging
    /// (the regression then corrects what alignment left).
    pub aligned_here: bool,
}

/// What a run can decide, simulated from a pilot evaluation's verdicts
/// (`engine::judge::plan`, mirrored here for the browser).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecideView {
    pub pilot: i64,
    pub pilot_name: String,
    /// Simulated experiments per size.
    pub experiments: usize,
    pub half_width: f64,
    pub difference: Option<f64>,
    /// The run asked for: its questions and trials (M).
    pub run: (usize, usize),
    /// The power a plan aims for.
    pub power: f64,
    pub pairs: Vec<PairDecideView>,
}

impl DecideView {
    /// Per M, the fewest questions found: "M = 5: 800 questions, M = 25:
    /// more than 6,400 questions".
    pub fn needs(found: &[(usize, Option<usize>)]) -> String {
        found
            .iter()
            .map(|(m, q)| match q {
                Some(q) => format!("M = {m}: {} questions", crate::format::int(*q as i64)),
                None => format!("M = {m}: more than {} questions", crate::format::int(DECIDE_MOST as i64)),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The most questions a plan tries (`engine::judge::plan::QUESTIONS`).
pub const DECIDE_MOST: usize = 6_400;

/// One pair's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairDecideView {
    pub a_name: String,
    pub b_name: String,
    pub pilot_questions: usize,
    pub pilot_effect: f64,
    /// The difference to detect as the pilot's all-tie questions allow it.
    pub difference_reached: Option<f64>,
    /// Every (questions, M) tried.
    pub cells: Vec<Cell>,
    /// Per M: the fewest questions tried reaching the half-width, and the
    /// power (`None`: more than the most tried).
    pub questions_for_half_width: Vec<(usize, Option<usize>)>,
    pub questions_for_power: Vec<(usize, Option<usize>)>,
    /// The run asked for.
    pub run: Option<Cell>,
    /// The half-width against questions, a line per M.
    pub curve_svg: String,
}

#[cfg(feature = "ssr")]
impl PairDecideView {
    pub fn new(a_name: String, b_name: String, p: engine::judge::plan::PairPlan, half_width: f64) -> Self {
        let curve_svg = engine::judge::plan::curve_svg(&format!("{a_name} vs {b_name}"), &p, half_width);
        PairDecideView {
            a_name,
            b_name,
            pilot_questions: p.pilot_questions,
            pilot_effect: p.pilot_effect,
            difference_reached: p.difference_reached,
            cells: p.cells,
            questions_for_half_width: p.questions_for_half_width,
            questions_for_power: p.questions_for_power,
            run: p.run,
            curve_svg,
        }
    }
}

/// One question of a pair in the drill-down list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrillQuestionView {
    pub id: i64,
    pub question: String,
    pub level: Option<String>,
    /// Over the trials: A wins, ties, B wins; "discarded" etc. when not judged.
    pub a_wins: usize,
    pub ties: usize,
    pub b_wins: usize,
    pub alignment: String,
    pub legacy: Option<String>,
}

/// Questions the drill-down lists at once.
pub const DRILL_PER_PAGE: i64 = 25;

/// A page of a pair's questions in the drill-down, in the set's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrillQuestionsPage {
    pub questions: Vec<DrillQuestionView>,
    pub total: i64,
    /// From 1.
    pub page: i64,
    pub pages: i64,
}

/// One judgment in the drill-down.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgmentView {
    pub trial: u32,
    pub repeat: u32,
    /// "A first" or "B first".
    pub order: String,
    pub a: [u8; 4],
    pub b: [u8; 4],
    pub reasoning: String,
    /// The job item whose call log holds it.
    pub item: String,
}

/// One question of a pair, everything judged about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrillView {
    pub question_id: i64,
    pub question: String,
    pub level: Option<String>,
    pub a_name: String,
    pub b_name: String,
    /// As generated, and as judged (after alignment).
    pub a_raw: String,
    pub b_raw: String,
    pub a_judged: String,
    pub b_judged: String,
    pub alignment: String,
    pub judgments: Vec<JudgmentView>,
    /// Per trial: (trial, A's total, B's total, outcome).
    pub verdicts: Vec<(u32, f64, f64, String)>,
    /// The legacy verdict: overall, and per aspect.
    pub legacy: Option<(String, Vec<(String, String)>)>,
    pub job_id: Option<i64>,
}

/// An evaluation report's CSV tables.
pub const EVAL_TABLES: [&str; 12] = [
    "pairs",
    "trials",
    "aspects",
    "levels",
    "paper",
    "ranking",
    "length-control",
    "sequential",
    "jury",
    "jury-agreement",
    "judgments",
    "alignment",
];

/// The unbiased protocol's aspects (as `engine::judge::ASPECTS`, for the browser).
pub const ASPECT_NAMES: [&str; 4] = ["Comprehensiveness", "Relevance", "Empowerment", "Directness"];

/// One stage of a run's plan: what it will ask of the model, before
/// anything runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanStage {
    pub label: String,
    /// Calls: exactly `calls`, or between `calls` and `calls_max` where
    /// the model's replies decide how many (length alignment).
    pub calls: u64,
    pub calls_max: u64,
    pub prompt_tokens: u64,
    /// Whether `prompt_tokens` is the count of the very prompts the run
    /// sends (judging answers as they are), rather than an estimate.
    pub prompt_exact: bool,
    /// The replies' tokens expected (the mean of this model's recent
    /// replies to the task where there are some, else a typical length).
    pub completion_tokens: u64,
    /// Its price; `None` where the model has no price set.
    pub cost_usd: Option<f64>,
    /// How it is counted, in words.
    pub how: String,
    /// Of `prompt_tokens`, at most how many repeat a prompt sent before
    /// and may be read from the provider's prefix cache
    /// (`engine::llm::cacheable_prefix`); 0 where no model is called.
    #[serde(default)]
    pub cacheable_tokens: u64,
    /// What those tokens would save at the model's cached rate (less than
    /// `cost_usd`); `None` where the model has no cached rate set.
    #[serde(default)]
    pub cache_saving_usd: Option<f64>,
    /// Of `prompt_tokens`, how many a model is sent again: the same judging
    /// request once per trial and repeat after the first (whatever its
    /// length); 0 where no model judges or each request goes once.
    #[serde(default)]
    pub resent_tokens: u64,
    /// Whether a model judges in this stage (a juror calling an LLM).
    #[serde(default)]
    pub judged_by_model: bool,
}

/// What a run will ask of the model, stage by stage, and who answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPlan {
    pub stages: Vec<PlanStage>,
    /// Who answers and whether anyone is paid: "free: the offline
    /// provider…", "nothing is called: the simulated judge…", or the
    /// model with its price (or that it has none).
    pub paid_by: String,
    /// Whether the calls go to a model someone pays for.
    pub paid: bool,
    pub questions: i64,
    /// Judging calls in all (the verdicts' draws), at least.
    pub judgments: u64,
    /// How long the calls would take on the configured endpoint, from its
    /// measured latency; `None` until a call to it was measured.
    #[serde(default)]
    pub time: Option<crate::model::TimeEstimate>,
}

impl RunPlan {
    pub fn calls(&self) -> (u64, u64) {
        (self.stages.iter().map(|s| s.calls).sum(), self.stages.iter().map(|s| s.calls_max).sum())
    }
    pub fn tokens(&self) -> u64 {
        self.stages.iter().map(|s| s.prompt_tokens + s.completion_tokens).sum()
    }
    /// The price in all; `None` when some stage has no price.
    pub fn cost_usd(&self) -> Option<f64> {
        self.stages.iter().map(|s| s.cost_usd).sum()
    }
    /// Prompt tokens the provider's prefix cache may serve, in all.
    pub fn cacheable_tokens(&self) -> u64 {
        self.stages.iter().map(|s| s.cacheable_tokens).sum()
    }
    /// What they save at the cached rate; `None` where no stage has a cached rate.
    pub fn cache_saving_usd(&self) -> Option<f64> {
        self.stages.iter().filter_map(|s| s.cache_saving_usd).reduce(|a, b| a + b)
    }
    /// What a provider's prefix cache may take off a paid plan with judging:
    /// the repeated judging prompts' cacheable tokens and their saving at
    /// the cached rate; `None` for a free plan or one with no judging.
    pub fn cache_note(&self) -> Option<String> {
        if !self.paid || self.judgments == 0 {
            return None;
        }
        let int = |n: u64| crate::format::int(n as i64);
        let (min, step) = (types::llm::PREFIX_CACHE_MIN, types::llm::PREFIX_CACHE_STEP);
        let tokens = self.cacheable_tokens();
        // Why nothing is expected from the cache, when nothing is.
        let none = if !self.stages.iter().any(|s| s.judged_by_model) {
            Some("the judge calls no model, so no judging prompt goes to a provider's cache".to_string())
        } else if self.stages.iter().all(|s| s.resent_tokens == 0) {
            Some(
                "each judging request is sent once (one trial, one repeat), so none repeats a prompt the \
                 provider's prefix cache could serve"
                    .to_string(),
            )
        } else if tokens == 0 {
            Some(format!(
                "no judging prompt reaches the {} tokens a provider's prefix cache needs (OpenAI's rule), so none \
                 is expected to be read from it",
                int(min)
            ))
        } else {
            None
        };
        if let Some(why) = none {
            return Some(format!("Prompt cache: {why}."));
        }
        let prompt: u64 = self.stages.iter().map(|s| s.prompt_tokens).sum();
        let saving = match self.cache_saving_usd() {
            Some(s) => format!("up to {} less than the price above, at the model's cached rate", crate::format::usd(s)),
            None => {
                "the model has no cached rate set (Settings takes one), so the price above counts them in full".into()
            }
        };
        Some(format!(
            "Prompt cache: up to {} of the prompt tokens ({:.0}%) repeat a prompt sent before (the same judging \
             request, once per trial and repeat) and may be read from the provider's prefix cache (OpenAI's rule: a \
             prefix of at least {} tokens, in steps of {step}): {saving}.",
            int(tokens),
            tokens as f64 / prompt.max(1) as f64 * 100.0,
            int(min),
        ))
    }
}
