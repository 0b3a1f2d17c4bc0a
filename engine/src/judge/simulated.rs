//! The simulated judge ("bias lab"): a provider that scores answers with a
//! hidden true quality — the offline rubric ([`super::scoring::rubric`]) —
//! plus the biases a user sets: a **position bias** (points added to every
//! aspect of the answer shown first), a **length bias** (points per 10 words
//! the answer is longer than the other, added to the longer one) and
//! Gaussian **noise** (its standard deviation, in points), drawn from a
//! generator seeded by the request and its `sample`, so every draw is
//! reproducible and repeats differ. Scores are rounded and kept within 0–5.
//! With it a user can watch what each correction of the protocol removes;
//! the legacy protocol's verdict is the higher biased total (the first on a
//! tie); every other purpose goes to the offline provider.

use sha2::{Digest, Sha256};

use super::legacy;
use super::scoring::{self, rubric};
use crate::chunk::{Bpe, Tokenizer};
use crate::llm::offline::OfflineProvider;
use crate::llm::{count_prompt_tokens, BoxFuture, CallProvider, ChatRequest, Failure, Provider, ProviderReply};

/// The biases of a simulated judge.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Biases {
    pub position: f64,
    pub length_per_10_words: f64,
    pub noise: f64,
    pub seed: u64,
}

pub struct SimulatedJudge {
    biases: Biases,
    /// Part of the cache key: judges with other biases never share replies.
    address: String,
    inner: OfflineProvider,
}

impl SimulatedJudge {
    pub fn new(biases: Biases) -> SimulatedJudge {
        let address = format!(
            "simulated://position={},length={},noise={},seed={}",
            biases.position, biases.length_per_10_words, biases.noise, biases.seed
        );
        // Every other judging call (the length-alignment append, a ping)
        // goes to the judge's offline tasks.
        let mut inner = OfflineProvider::new();
        super::register_offline(&mut inner);
        SimulatedJudge { biases, address, inner }
    }

    /// The two answers' scores (Answer 1, Answer 2) for a scoring request.
    pub fn scores(&self, req: &ChatRequest) -> ([u8; 4], [u8; 4]) {
        let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
        let (question, first, second) = scoring::parts(message);
        let (w1, w2) = (first.split_whitespace().count() as f64, second.split_whitespace().count() as f64);
        let digest = Sha256::new().chain_update(message.as_bytes()).chain_update(req.sample.to_le_bytes()).finalize();
        let mut rng =
            fastrand::Rng::with_seed(self.biases.seed ^ u64::from_le_bytes(digest[..8].try_into().unwrap_or([0; 8])));
        let mut gauss = || {
            // Box–Muller.
            let (u1, u2) = (rng.f64().max(f64::MIN_POSITIVE), rng.f64());
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        };
        let b = self.biases;
        let mut score = |truth: [u8; 4], first_shown: bool, extra_words: f64| -> [u8; 4] {
            truth.map(|t| {
                let mut s = t as f64;
                if first_shown {
                    s += b.position;
                }
                s += b.length_per_10_words * (extra_words.max(0.0) / 10.0);
                s += b.noise * gauss();
                s.round().clamp(0.0, 5.0) as u8
            })
        };
        let one = score(rubric(question, first), true, w1 - w2);
        let two = score(rubric(question, second), false, w2 - w1);
        (one, two)
    }
}

impl Provider for SimulatedJudge {
    fn name(&self) -> CallProvider {
        CallProvider::Simulated
    }

    fn base_url(&self) -> &str {
        &self.address
    }

    fn default_model(&self) -> &str {
        "bias-lab"
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ProviderReply, Failure>> {
        if req.purpose != scoring::PURPOSE && req.purpose != legacy::PURPOSE {
            return self.inner.chat(req);
        }
        Box::pin(async move {
            let (one, two) = self.scores(req);
            if req.purpose == legacy::PURPOSE {
                // The legacy rule on the biased scores: the higher total, the first on a tie.
                let total = |s: [u8; 4]| s.iter().map(|x| *x as u32).sum::<u32>();
                let text = legacy::reply_for(req, total(one) >= total(two));
                return Ok(ProviderReply {
                    prompt_tokens: count_prompt_tokens(&req.messages),
                    completion_tokens: Tokenizer::Cl100kBase.count(&text) as u64,
                    text,
                    model: "bias-lab".into(),
                    attempts: 1,
                    finish_reason: Some("stop".into()),
                    batched: false,
                    cached_tokens: 0,
                });
            }
            let aspects = |s: [u8; 4]| serde_json::json!({"Comprehensiveness": s[0], "Relevance": s[1], "Empowerment": s[2], "Directness": s[3]});
            let text = serde_json::json!({"Answer 1": aspects(one), "Answer 2": aspects(two),
                "reasoning": "simulated judge: the offline rubric plus the configured biases and noise"})
            .to_string();
            Ok(ProviderReply {
                prompt_tokens: count_prompt_tokens(&req.messages),
                completion_tokens: Tokenizer::Cl100kBase.count(&text) as u64,
                text,
                model: "bias-lab".into(),
                attempts: 1,
                finish_reason: Some("stop".into()),
                batched: false,
                cached_tokens: 0,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::{verdict, Order, Outcome};

    const Q: &str = "Who taught Bo Marsh to mend nets at Saltmere?";
    const ANSWER: &str = "Ada Pell taught Bo Marsh to mend nets at Saltmere. She learned it in 1790 from her father.";

    fn judge(b: Biases, first: &str, second: &str, sample: u32) -> ([u8; 4], [u8; 4]) {
        SimulatedJudge::new(b).scores(&scoring::request(Q, first, second, sample))
    }

    #[test]
    fn position_bias_favours_the_first_shown_and_exchanging_positions_cancels_it() {
        let b = Biases { position: 1.0, length_per_10_words: 0.0, noise: 0.0, seed: 1 };
        let (one, two) = judge(b, ANSWER, ANSWER, 0);
        let truth = rubric(Q, ANSWER);
        assert_eq!(two, truth);
        assert!(one.iter().zip(truth).all(|(s, t)| *s == (t + 1).min(5)), "{one:?} vs {truth:?}");
        // A (first) wins in one order; both orders together tie.
        let ab = scoring::parse(
            &serde_json::json!({"Answer 1": aspects(one), "Answer 2": aspects(two)}).to_string(),
            Order::AFirst,
            0,
        )
        .unwrap()
        .0;
        let (one, two) = judge(b, ANSWER, ANSWER, 0);
        let ba = scoring::parse(
            &serde_json::json!({"Answer 1": aspects(one), "Answer 2": aspects(two)}).to_string(),
            Order::BFirst,
            0,
        )
        .unwrap()
        .0;
        assert_eq!(verdict(&[ab.clone()]).unwrap().outcome, Outcome::A);
        assert_eq!(verdict(&[ab, ba]).unwrap().outcome, Outcome::Tie);
    }

    #[test]
    fn length_bias_adds_per_ten_extra_words_and_noise_differs_by_draw_but_repeats_exactly() {
        let longer = format!("{ANSWER} {}", "More words about the nets and the marsh follow here. ".repeat(3));
        let b = Biases { position: 0.0, length_per_10_words: 1.0, noise: 0.0, seed: 1 };
        let (one, two) = judge(b, &longer, ANSWER, 0);
        let extra = (longer.split_whitespace().count() - ANSWER.split_whitespace().count()) as f64 / 10.0;
        let truth = rubric(Q, &longer);
        assert!(one.iter().zip(truth).all(|(s, t)| *s == ((t as f64 + extra).round().min(5.0)) as u8), "{one:?}");
        assert_eq!(two, rubric(Q, ANSWER), "the shorter answer gets nothing");
        let noisy = Biases { position: 0.0, length_per_10_words: 0.0, noise: 1.5, seed: 3 };
        let draws: Vec<_> = (0..8).map(|s| judge(noisy, ANSWER, ANSWER, s)).collect();
        assert!(draws.iter().any(|d| *d != draws[0]), "draws differ");
        assert_eq!(judge(noisy, ANSWER, ANSWER, 5), draws[5], "the same draw repeats exactly");
    }

    #[tokio::test]
    async fn the_legacy_verdict_follows_the_biased_scores() {
        use crate::llm::{CallContext, Gateway, MemoryStore, PriceTable};
        let b = Biases { position: 1.0, length_per_10_words: 0.0, noise: 0.0, seed: 1 };
        let gw = Gateway::new(
            std::sync::Arc::new(SimulatedJudge::new(b)),
            std::sync::Arc::new(MemoryStore::default()),
            PriceTable::default(),
        );
        let poorer = "Ada Pell taught Bo Marsh.";
        // The better answer shown first wins; between identical answers the
        // position bonus decides for the first.
        let r = gw.chat(&legacy::request(Q, ANSWER, poorer, 0), &CallContext::default()).await.unwrap();
        assert_eq!(legacy::parse(&r.text).unwrap().overall, Outcome::A);
        let same = gw.chat(&legacy::request(Q, ANSWER, ANSWER, 0), &CallContext::default()).await.unwrap();
        assert_eq!(legacy::parse(&same.text).unwrap().overall, Outcome::A, "identical answers: the first wins");
        assert_eq!(r.provider, types::CallProvider::Simulated);
    }

    fn aspects(s: [u8; 4]) -> serde_json::Value {
        serde_json::json!({"Comprehensiveness": s[0], "Relevance": s[1], "Empowerment": s[2], "Directness": s[3]})
    }
}
