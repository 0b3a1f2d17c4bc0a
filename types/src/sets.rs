//! Every closed set that crosses a boundary, with what each value means.

use crate::closed_set;

closed_set! {
    /// What a background job does.
    pub enum JobKind ("a job's kind") {
        /// One-sentence summaries of every chunk of a project.
        Summaries = "summaries",
        /// The knowledge graph of a project: extraction per chunk, then merging.
        Graph = "graph",
        /// A question set: one item per planned question.
        Questions = "questions",
        /// Question–retrieval relevance of a set: one item per question.
        Relevance = "relevance",
        /// The entities each question of a set names: one item per question.
        Mentions = "mentions",
        /// A method's answers to a question set.
        Answers = "answers",
        /// Judging answer sets in pairs.
        Evaluation = "evaluation",
        /// The LLM rater over a study's items.
        StudyRating = "study_rating",
        /// Reference-based metrics of answer sets.
        Metrics = "metrics",
    }
}

impl JobKind {
    /// What the pages call it, in words (its stored name is `as_str`).
    pub fn label(self) -> &'static str {
        match self {
            JobKind::Summaries => "chunk summaries",
            JobKind::Graph => "graph",
            JobKind::Questions => "questions",
            JobKind::Relevance => "retrieval relevance",
            JobKind::Mentions => "entity listing",
            JobKind::Answers => "answers",
            JobKind::Evaluation => "evaluation",
            JobKind::StudyRating => "LLM rating of a study",
            JobKind::Metrics => "metrics",
        }
    }
}

closed_set! {
    /// Where a job is. `Interrupted` is never stored by a runner: it is how
    /// a `running` job whose process died reads.
    pub enum JobStatus ("a job's status") {
        Queued = "queued",
        Running = "running",
        Done = "done",
        Failed = "failed",
        Cancelled = "cancelled",
        Interrupted = "interrupted",
    }
}

impl JobStatus {
    /// Queued or running: the job's page keeps refreshing.
    pub fn is_active(self) -> bool {
        matches!(self, JobStatus::Queued | JobStatus::Running)
    }

    /// Stopped before its end (interrupted, cancelled or failed): it can be resumed.
    pub fn can_resume(self) -> bool {
        matches!(self, JobStatus::Interrupted | JobStatus::Cancelled | JobStatus::Failed)
    }
}

closed_set! {
    /// How a job item ended.
    pub enum ItemStatus ("status") {
        Done = "done",
        Failed = "failed",
    }
}

closed_set! {
    /// Which provider the LLM gateway calls.
    #[derive(Default)]
    pub enum ProviderKind ("provider") {
        /// Deterministic classical NLP; no model. The default.
        #[default]
        Offline = "offline",
        /// Any OpenAI-compatible endpoint.
        OpenAi = "openai",
    }
}

closed_set! {
    /// Who answered a logged call (the call log's and the cache's `provider`).
    pub enum CallProvider ("a call's provider") {
        /// The offline stand-ins: classical NLP, no model.
        Offline = "offline",
        /// An OpenAI-compatible endpoint (live or through its Batch API).
        OpenAi = "openai",
        /// The bias lab's judge: the rubric plus set biases and noise.
        Simulated = "simulated",
    }
}

impl CallProvider {
    /// A language model answered (someone may have paid for it).
    pub fn is_model(self) -> bool {
        self == CallProvider::OpenAi
    }

    /// How pages name who answered: the offline provider and the bias lab
    /// plainly as not a language model.
    pub fn label(self, model: &str) -> String {
        match self {
            CallProvider::Offline => "offline (no LLM)".to_string(),
            CallProvider::Simulated => "simulated judge (bias lab, no LLM)".to_string(),
            CallProvider::OpenAi => format!("openai · {model}"),
        }
    }
}

closed_set! {
    /// Where a question set's entities come from (the entity diagnostics).
    #[derive(Default)]
    pub enum EntitySource ("the entity source") {
        /// The graph's names matched in each question's text. Default.
        #[default]
        Graph = "graph",
        /// The entities an LLM listed per question (a `mentions` job).
        Llm = "llm",
    }
}

closed_set! {
    /// Who wrote a question (a question's `generator`, before any `+edited`).
    pub enum QuestionWriter ("a question's generator") {
        /// From the knowledge graph (node, edge or subgraph).
        Graph = "graph",
        /// From chunk summaries.
        Summary = "summary",
        /// HieraRAG's categories.
        Hierarchical = "hierarchical",
        /// A file's question that names no generator Assay knows.
        Imported = "imported",
        /// Added by hand on the Questions page.
        Manual = "manual",
        /// Benchmark files, by layout.
        UltraDomain = "dataset:ultradomain",
        GraphRagBench = "dataset:graphrag-bench",
        MultiHopRag = "dataset:multihop-rag",
        Table = "dataset:table",
    }
}

/// A question's generator as stored and exported: who wrote it, and
/// whether a person edited it since (`graph+edited`). Travels as that text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Generator {
    pub by: QuestionWriter,
    pub edited: bool,
}

impl Generator {
    pub const fn new(by: QuestionWriter) -> Generator {
        Generator { by, edited: false }
    }

    /// The generator a stored or exported text names (exact).
    pub fn parse(text: &str) -> Result<Generator, crate::Unknown> {
        let (by, edited) = match text.strip_suffix("+edited") {
            Some(by) => (by, true),
            None => (text, false),
        };
        QuestionWriter::parse(by)
            .map(|by| Generator { by, edited })
            .map_err(|e| crate::Unknown { value: text.to_string(), ..e })
    }

    /// As edited by a person (a question added by hand stays `manual`).
    pub fn edited(self) -> Generator {
        Generator { edited: self.by != QuestionWriter::Manual, ..self }
    }
}

impl Default for Generator {
    fn default() -> Generator {
        Generator::new(QuestionWriter::Imported)
    }
}

impl std::fmt::Display for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.by.as_str())?;
        if self.edited {
            f.write_str("+edited")?;
        }
        Ok(())
    }
}

impl serde::Serialize for Generator {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Generator {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Generator, D::Error> {
        let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
        Generator::parse(&text).map_err(serde::de::Error::custom)
    }
}

closed_set! {
    /// Which protocols an evaluation runs.
    pub enum Protocol ("protocol") {
        /// Length alignment, position exchange, trials (Zeng et al.).
        Unbiased = "unbiased",
        /// One pairwise verdict per question, answers in one order.
        Legacy = "legacy",
        Both = "both",
    }
}

impl Protocol {
    pub fn unbiased(self) -> bool {
        self != Protocol::Legacy
    }
    pub fn legacy(self) -> bool {
        self != Protocol::Unbiased
    }
}

closed_set! {
    /// The unbiased protocol's scoring prompt (recorded with an
    /// evaluation; its report names it and its hash). Its stored name
    /// `content-only` predates the snake_case rule and stays as stored.
    pub enum JudgePrompt ("the judge prompt") {
        /// The Unbiased GraphRAG Evaluation paper's 0–5 rubric per aspect. Default.
        Paper = "paper",
        /// The rubric plus "order and length are not merits".
        ContentOnly = "content-only",
    }
}

closed_set! {
    /// Which aspects the legacy protocol's judge picks winners on.
    pub enum LegacyAspects ("the legacy aspects") {
        /// LightRAG's evaluation prompt: Comprehensiveness, Diversity, Empowerment. Default.
        Lightrag = "lightrag",
        /// The GraphRAG paper's: those three and Directness.
        Graphrag = "graphrag",
    }
}

impl Default for JudgePrompt {
    fn default() -> JudgePrompt {
        JudgePrompt::Paper
    }
}

impl Default for LegacyAspects {
    fn default() -> LegacyAspects {
        LegacyAspects::Lightrag
    }
}

impl Default for Protocol {
    fn default() -> Protocol {
        Protocol::Both
    }
}

impl Default for JudgeKind {
    fn default() -> JudgeKind {
        JudgeKind::Llm
    }
}

closed_set! {
    /// Which definitions a metrics run reports: the textbook ones, or as
    /// the HieraRAG authors' released code computes them. Its stored name
    /// `as-published` predates the snake_case rule.
    pub enum Definitions ("definitions") {
        Standard = "standard",
        AsPublished = "as-published",
    }
}

impl Default for Definitions {
    fn default() -> Definitions {
        Definitions::Standard
    }
}

impl Definitions {
    /// One line for a report's header: what the numbers follow.
    pub fn describe(self) -> &'static str {
        match self {
            Definitions::Standard => {
                "standard — AP/nDCG/Recall count each relevant unit once (trec_eval); \
                 ROUGE-1 unstemmed (rouge-score); BLEU as sacrebleu (0–100); NMI as scikit-learn (arithmetic), \
                 equal-count bins per level"
            }
            Definitions::AsPublished => {
                "as published in the HieraRAG authors' code, bug for bug — every retrieved chunk of a \
                 gold document counts as a hit, so AP, nDCG@10 and Recall@10 can exceed 1; ROUGE-1 with stemming; \
                 NLTK sentence BLEU with method-4 smoothing (0–1); NMI = MI / H(category) over 5 equal-width bins of \
                 the set's similarities (also for levels under 10 questions, which the authors' code leaves out)"
            }
        }
    }
}

closed_set! {
    /// What a retrieved chunk must match to count as relevant (the
    /// HieraRAG paper's unit is the question's source document).
    pub enum RelevanceUnit ("the relevance unit") {
        /// The question's source document (the paper's). Default.
        Document = "document",
        /// A chunk overlapping the source chunk's span.
        Passage = "passage",
        /// The source chunk itself.
        Chunk = "chunk",
    }
}

impl Default for RelevanceUnit {
    fn default() -> RelevanceUnit {
        RelevanceUnit::Document
    }
}

closed_set! {
    /// Where a pair stands at a look of sequential trials.
    pub enum Standing ("a pair's standing") {
        /// The interval lies inside the band.
        Even = "even",
        /// The interval lies entirely outside the band.
        Differs = "differs",
        /// The interval crosses the band's edge.
        Open = "open",
    }
}

closed_set! {
    /// Who judges.
    pub enum JudgeKind ("judge") {
        /// The configured provider (the offline one when nothing is configured).
        Llm = "llm",
        /// The offline rubric judge.
        Offline = "offline",
        /// The bias lab: the rubric plus set biases and noise.
        Simulated = "simulated",
    }
}

closed_set! {
    /// The BPE vocabularies Assay counts tokens with (the engine counts).
    pub enum Tokenizer ("the tokenizer") {
        /// GPT-3.5/GPT-4 family; LightRAG's default.
        Cl100kBase = "cl100k_base",
        /// GPT-4o family.
        O200kBase = "o200k_base",
    }
}

impl Default for Tokenizer {
    fn default() -> Tokenizer {
        Tokenizer::Cl100kBase
    }
}

closed_set! {
    /// What a study asks raters to rate.
    pub enum StudyKind ("a study's kind") {
        /// Generated questions on Likert dimensions (Zeng et al. §V-C).
        Questions = "questions",
        /// Question–answer pairs: correctness, hallucination, answerability,
        /// and the question's category (HieraRAG §2.5).
        Answers = "answers",
    }
}

closed_set! {
    /// A study link: one anyone may open (each opening a new rater), one
    /// rater's own, or an imported annotator's.
    pub enum LinkKind ("a link") {
        Open = "open",
        Rater = "rater",
        /// An imported study's annotator: no token, never opens.
        Imported = "imported",
    }
}

closed_set! {
    /// What a share link opens, read-only.
    pub enum ShareKind ("a share link's page") {
        Evaluation = "evaluation",
        Study = "study",
        /// A question set.
        Questions = "questions",
        /// A metrics run.
        Metrics = "metrics",
        Experiment = "experiment",
        /// A project's knowledge graph.
        Graph = "graph",
    }
}

closed_set! {
    /// An account's role: the one owner (every right) or a member (the
    /// rights each project grants).
    pub enum Role ("role") {
        Owner = "owner",
        Member = "member",
    }
}

closed_set! {
    /// A member's access to a project.
    pub enum Access ("access") {
        Read = "read",
        Edit = "edit",
    }
}

closed_set! {
    /// How a question set was made.
    pub enum QuestionSetKind ("a question set's kind") {
        /// From the knowledge graph: node, edge and subgraph questions.
        Graph = "graph",
        /// From chunk summaries.
        Summary = "summary",
        /// HieraRAG's categories.
        Hierarchical = "hierarchical",
        /// Brought from a file.
        Imported = "imported",
    }
}

closed_set! {
    /// Where an experiment is.
    pub enum ExperimentStatus ("an experiment's status") {
        Running = "running",
        Done = "done",
        Failed = "failed",
        /// Its process stopped while it ran; it can be resumed.
        Interrupted = "interrupted",
    }
}

closed_set! {
    /// An experiment's stage.
    pub enum StageKind ("a stage") {
        Corpus = "corpus",
        Graph = "graph",
        Questions = "questions",
        Answers = "answers",
        /// A method against a second answer set of itself.
        Sanity = "sanity",
        Evaluation = "evaluation",
        Metrics = "metrics",
    }
}

closed_set! {
    /// Where an experiment's stage is.
    pub enum StageState ("a stage's state") {
        Waiting = "waiting",
        Running = "running",
        Done = "done",
        /// An earlier run's result with the same inputs and settings.
        Reused = "reused",
        Failed = "failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ClosedSet;

    fn round_trips<T: ClosedSet + std::fmt::Debug + PartialEq + serde::Serialize + serde::de::DeserializeOwned>() {
        assert_eq!(T::ALL.len(), T::NAMES.len());
        for (v, name) in T::ALL.iter().zip(T::NAMES) {
            assert_eq!(v.as_str(), *name);
            assert_eq!(T::parse(name).unwrap(), *v);
            let json = serde_json::to_string(v).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<T>(&json).unwrap(), *v);
        }
        let mut names = T::NAMES.to_vec();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), T::NAMES.len(), "{}: a name twice", T::WHAT);
        assert!(T::parse("no such name").is_err());
    }

    #[test]
    fn every_set_round_trips_by_name_through_text_and_json() {
        round_trips::<JobKind>();
        round_trips::<JobStatus>();
        round_trips::<ItemStatus>();
        round_trips::<ProviderKind>();
        round_trips::<CallProvider>();
        round_trips::<EntitySource>();
        round_trips::<QuestionWriter>();
        round_trips::<Protocol>();
        round_trips::<JudgeKind>();
        round_trips::<JudgePrompt>();
        round_trips::<LegacyAspects>();
        round_trips::<Definitions>();
        round_trips::<RelevanceUnit>();
        round_trips::<Standing>();
        round_trips::<StudyKind>();
        round_trips::<LinkKind>();
        round_trips::<Tokenizer>();
        round_trips::<ShareKind>();
        round_trips::<Role>();
        round_trips::<Access>();
        round_trips::<QuestionSetKind>();
        round_trips::<ExperimentStatus>();
        round_trips::<StageKind>();
        round_trips::<StageState>();
    }

    #[test]
    fn a_generator_reads_back_from_its_text_with_its_edit_mark() {
        for text in ["graph", "summary+edited", "manual", "dataset:multihop-rag", "hierarchical+edited"] {
            let g = Generator::parse(text).unwrap();
            assert_eq!(g.to_string(), text);
            assert_eq!(serde_json::from_str::<Generator>(&serde_json::to_string(&g).unwrap()).unwrap(), g);
        }
        let g = Generator::parse("graph+edited").unwrap();
        assert_eq!((g.by, g.edited), (QuestionWriter::Graph, true));
        assert_eq!(Generator::new(QuestionWriter::Summary).edited().to_string(), "summary+edited");
        assert_eq!(Generator::new(QuestionWriter::Manual).edited().to_string(), "manual");
        let e = Generator::parse("gpt-4+edited").unwrap_err().to_string();
        assert!(e.starts_with("a question's generator must be graph, summary,"), "{e}");
        assert!(e.ends_with("not \"gpt-4+edited\""), "{e}");
        assert!(Generator::parse("graph+edited+edited").is_err());
    }

    #[test]
    fn an_unknown_name_is_an_error_that_names_the_set_and_its_values() {
        let e = Protocol::parse("fair").unwrap_err();
        assert_eq!(e.to_string(), "protocol must be unbiased, legacy or both, not \"fair\"");
        assert_eq!(ItemStatus::parse("Done").unwrap_err().to_string(), "status must be done or failed, not \"Done\"");
        let e = serde_json::from_str::<JobKind>("\"grpah\"").unwrap_err().to_string();
        assert!(e.starts_with("a job's kind must be summaries, graph, "), "{e}");
        assert!(e.contains("not \"grpah\""), "{e}");
        assert!(serde_json::from_str::<JobKind>("3").is_err());
    }

    #[test]
    fn names_are_snake_case() {
        let all: Vec<&str> = [
            JobKind::NAMES,
            JobStatus::NAMES,
            ProviderKind::NAMES,
            CallProvider::NAMES,
            EntitySource::NAMES,
            Protocol::NAMES,
            JudgeKind::NAMES,
            LegacyAspects::NAMES,
            RelevanceUnit::NAMES,
            Standing::NAMES,
            StudyKind::NAMES,
            LinkKind::NAMES,
            ShareKind::NAMES,
            Role::NAMES,
            Access::NAMES,
            QuestionSetKind::NAMES,
            ExperimentStatus::NAMES,
            StageKind::NAMES,
            StageState::NAMES,
        ]
        .concat();
        for n in all {
            assert!(n.chars().all(|c| c.is_ascii_lowercase() || c == '_') && !n.starts_with('_'), "{n}");
        }
    }
}
