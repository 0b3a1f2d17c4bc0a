//! The summary-based baseline (what MGRAG and LightRAG used; seed 000 §II):
//! the head and tail of every document, concatenated into a dataset
//! description; then one LLM call proposing K users × K tasks × K questions
//! (default 5 × 5 × 5 = 125). The prompt is LightRAG's reproduce/Step_2
//! prompt with the counts filled in.
//!
//! Tokens are counted with GPT-2's BPE (tiktoken's `r50k_base`, the same
//! merges as `GPT2Tokenizer`). The description of a document is its first
//! `head` and last `tail` tokens (the whole document when it is shorter than
//! both). With `replicate_lightrag`, the slices are LightRAG's own,
//! `tokens[1000:1000+half]` and `tokens[-(1000+half):1000]` with
//! `half = (head + tail) / 2` and Python's slicing rules: the second slice
//! is empty for documents of 3,000 tokens or more (LightRAG issue #1203), so
//! their "summary" is tokens 1000–2000 only. Off by default.
//!
//! Offline: the description's most frequent names and content words fill
//! templates for a fixed cast of users and tasks, so the set has the
//! baseline's shape (broad questions about what opens and ends the
//! documents) without an LLM.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::jobs::{ItemOutcome, WorkItem};
use crate::llm::prompt::{delimited, prompt_hash};
use crate::llm::{CallContext, ChatRequest, Gateway, Message};

pub const PURPOSE: &str = "question_summary";
pub const PROMPT: &str = include_str!("../../prompts/question_summary.txt");

/// The summary questions' settings: the request, as the form, the CLI and
/// a manifest's `[[questions]]` give it.
pub type SummarySettings = types::requests::SummaryQuestionsRequest;

/// `count` questions taken in turn from each (user, task) group, in the
/// reply's order: round-robin, so a cut spreads over every user and task.
pub fn select(questions: Vec<SummaryQuestion>, count: Option<usize>) -> Vec<SummaryQuestion> {
    let Some(count) = count else { return questions };
    let mut groups: Vec<((usize, usize), std::collections::VecDeque<SummaryQuestion>)> = Vec::new();
    for q in questions {
        match groups.iter_mut().find(|(k, _)| *k == (q.user, q.task)) {
            Some((_, g)) => g.push_back(q),
            None => groups.push(((q.user, q.task), std::collections::VecDeque::from([q]))),
        }
    }
    let mut out = Vec::new();
    while out.len() < count && groups.iter().any(|(_, g)| !g.is_empty()) {
        for (_, g) in groups.iter_mut() {
            if out.len() < count {
                if let Some(q) = g.pop_front() {
                    out.push(q);
                }
            }
        }
    }
    out
}

/// `tokens[start:stop]` with Python's rules: negative indices count from the
/// end, both ends are clamped, and `start >= stop` is empty.
fn py_slice<T: Clone>(tokens: &[T], start: isize, stop: isize) -> Vec<T> {
    let len = tokens.len() as isize;
    let norm = |i: isize| if i < 0 { (i + len).max(0) } else { i.min(len) };
    let (a, b) = (norm(start), norm(stop));
    if a >= b {
        Vec::new()
    } else {
        tokens[a as usize..b as usize].to_vec()
    }
}

/// The tokens of a document that go into the description (see the module docs).
pub fn head_tail<T: Clone>(tokens: &[T], s: &SummarySettings) -> Vec<T> {
    if s.replicate_lightrag {
        let half = ((s.head + s.tail) / 2) as isize;
        let mut out = py_slice(tokens, 1000, 1000 + half);
        out.extend(py_slice(tokens, -(1000 + half), 1000));
        return out;
    }
    if tokens.len() <= s.head + s.tail {
        return tokens.to_vec();
    }
    let mut out = tokens[..s.head].to_vec();
    out.extend_from_slice(&tokens[tokens.len() - s.tail..]);
    out
}

/// The dataset description: every document's head and tail, in order,
/// separated by blank lines.
pub fn describe_dataset(documents: &[&str], s: &SummarySettings) -> String {
    let bpe = tiktoken_rs::r50k_base_singleton();
    documents
        .iter()
        .map(|d| {
            let kept = head_tail(&bpe.encode_ordinary(d), s);
            // A cut may split a character's bytes; keep what decodes.
            String::from_utf8_lossy(&bpe.decode_bytes(&kept).unwrap_or_default()).into_owned()
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

pub fn request(description: &str, s: &SummarySettings) -> ChatRequest {
    let prompt = PROMPT
        .trim()
        .replace("{description}", &format!("<<<\n{description}\n>>>"))
        .replace("{users}", &s.users.to_string())
        .replace("{tasks}", &s.tasks.to_string())
        .replace("{questions}", &s.asked_per_task().to_string());
    let mut req = ChatRequest::new(PURPOSE, vec![Message::user(prompt)]);
    req.max_tokens = Some((s.users * s.tasks * s.asked_per_task() * 40 + 1000) as u32);
    req
}

/// One question of the baseline with the user and task it was written for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryQuestion {
    pub user: usize,
    pub user_description: String,
    pub task: usize,
    pub task_description: String,
    pub question: String,
}

/// Reads the `- User N: …`, `- Task N: …`, `- Question N: …` structure
/// (bullets, numbering and markdown emphasis tolerated). Questions before
/// any user or task are refused with the line.
pub fn parse(reply: &str) -> Result<Vec<SummaryQuestion>, String> {
    let mut out = Vec::new();
    let (mut user, mut task) = (None::<(usize, String)>, None::<(usize, String)>);
    for (n, raw) in reply.lines().enumerate() {
        let line = raw.trim().trim_start_matches(['-', '*', '•', '#']).trim().replace("**", "");
        let labelled = |label: &str| -> Option<(usize, String)> {
            let rest = line.strip_prefix(label)?.trim_start();
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            let number = digits.parse().ok()?;
            let text = rest[digits.len()..].trim_start_matches([':', '.', ')']).trim().to_string();
            Some((number, text))
        };
        if let Some(u) = labelled("User") {
            user = Some(u);
            task = None;
        } else if let Some(t) = labelled("Task") {
            task = Some(t);
        } else if let Some((_, q)) = labelled("Question") {
            if q.is_empty() {
                continue;
            }
            let (Some(u), Some(t)) = (&user, &task) else {
                return Err(format!("line {}: a question before any user and task", n + 1));
            };
            out.push(SummaryQuestion {
                user: u.0,
                user_description: u.1.clone(),
                task: t.0,
                task_description: t.1.clone(),
                question: q,
            });
        }
    }
    if out.is_empty() {
        return Err("no \"- Question N:\" lines in the reply".into());
    }
    Ok(out)
}

/// The single item of a summary-based set: the dataset's description
/// (its documents' heads and tails) and the settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub description: String,
    pub settings: SummarySettings,
}

/// What the item proposed: the questions kept, with their users and tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Proposed {
    pub questions: Vec<SummaryQuestion>,
    pub prompt_hash: Option<String>,
}

/// The set's one work item.
pub fn item(description: &str, s: &SummarySettings) -> WorkItem {
    WorkItem::new(crate::jobs::ItemKey::Summary, &Item { description: description.to_string(), settings: s.clone() })
}

pub async fn run_item(gateway: &Gateway, job_id: i64, item: WorkItem) -> ItemOutcome {
    let Item { description, settings } = match item.read() {
        Ok(it) => it,
        Err(error) => return ItemOutcome::failed(error),
    };
    let ctx =
        CallContext { job_id: Some(job_id), item: Some(item.key.clone()), prompt_hash: Some(prompt_hash(PROMPT)) };
    match gateway.chat(&request(&description, &settings), &ctx).await {
        Ok(reply) => {
            let tokens = reply.prompt_tokens + reply.completion_tokens;
            match parse(&reply.text).map(|q| select(q, settings.count)) {
                Ok(questions) => ItemOutcome::done::<Item>(
                    &Proposed { questions, prompt_hash: Some(prompt_hash(PROMPT)) },
                    tokens,
                    reply.cost_usd,
                ),
                Err(error) => ItemOutcome::Failed { error, tokens, cost_usd: reply.cost_usd },
            }
        }
        Err(e) => ItemOutcome::failed(e.to_string()),
    }
}

const USERS: [&str; 5] = [
    "A literature student writing an essay on the dataset",
    "A teacher preparing a lesson from it",
    "A journalist looking for a story",
    "A historian of the period and places it describes",
    "A general reader deciding whether to read it",
];
const TASKS: [&str; 5] = [
    "Identify the main themes",
    "Trace how the central figures develop",
    "Compare the beginning with the end",
    "Relate the setting to the events",
    "Summarise the whole for others",
];

/// The offline provider's reply: the module docs' templates, filled with
/// the description's most frequent capitalised names (then content words).
pub fn offline(req: &ChatRequest) -> Result<String, String> {
    let message = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let description = delimited(message).ok_or("the request has no <<< >>> delimited description")?;
    // The counts as the prompt states them ("identify 5 …", "list 5 …", "generate 5 …").
    let count = |label: &str| -> usize {
        message.split(label).nth(1).and_then(|r| r.split_whitespace().next()?.parse().ok()).unwrap_or(5)
    };
    let (users, tasks, questions) = (count("identify "), count("list "), count("generate "));
    // Enough topics that every (topic, template) pair is asked once:
    // the k-th question takes topic k mod T and template (k / T) mod 5.
    let topics = topics(description, (users * tasks * questions).div_ceil(5).max(12));
    let mut out = String::new();
    let mut k = 0;
    for u in 0..users {
        out.push_str(&format!("- User {}: {}\n", u + 1, USERS[u % USERS.len()]));
        for t in 0..tasks {
            out.push_str(&format!("    - Task {}: {}\n", t + 1, TASKS[t % TASKS.len()]));
            for q in 0..questions {
                let topic = topics.get(k % topics.len().max(1)).map_or("the dataset", String::as_str);
                let template = k / topics.len().max(1);
                k += 1;
                let question = match template % 5 {
                    0 => format!("What role does {topic} play in the dataset as a whole?"),
                    1 => format!("How does the treatment of {topic} change from the beginning to the end?"),
                    2 => format!("What broader themes does {topic} connect to?"),
                    3 => format!("Why might {topic} matter to someone studying this dataset?"),
                    _ => format!("What overall picture of {topic} does the dataset give?"),
                };
                out.push_str(&format!("        - Question {}: {question}\n", q + 1));
            }
        }
    }
    Ok(out)
}

/// The most frequent capitalised words not at a sentence start, then the
/// most frequent long words.
fn topics(text: &str, n: usize) -> Vec<String> {
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut words: HashMap<String, usize> = HashMap::new();
    let mut sentence_start = true;
    for raw in text.split_whitespace() {
        let w: String = raw.chars().filter(|c| c.is_alphanumeric() || *c == '\'').collect();
        if w.chars().count() > 3 {
            if !sentence_start && w.chars().next().is_some_and(char::is_uppercase) {
                *names.entry(w.clone()).or_default() += 1;
            } else if w.chars().count() > 6 {
                *words.entry(w.to_lowercase()).or_default() += 1;
            }
        }
        sentence_start = raw.ends_with(['.', '!', '?', ':']);
    }
    let ranked = |m: HashMap<String, usize>| {
        let mut v: Vec<(String, usize)> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v.into_iter().map(|(w, _)| w)
    };
    ranked(names).chain(ranked(words)).take(n).collect()
}

crate::job_items!(Item => Proposed);

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(n: usize) -> Vec<usize> {
        (0..n).collect()
    }

    #[test]
    fn head_and_tail_of_500_2500_and_5000_token_documents() {
        let s = SummarySettings::default();
        assert_eq!(head_tail(&tokens(500), &s), tokens(500), "shorter than head + tail: all of it");
        let mid = head_tail(&tokens(2_500), &s);
        assert_eq!(mid.len(), 2_000);
        assert_eq!((mid[999], mid[1000]), (999, 1_500), "first 1000, last 1000");
        let long = head_tail(&tokens(5_000), &s);
        assert_eq!((long.len(), long[0], long[999], long[1000], long[1999]), (2_000, 0, 999, 4_000, 4_999));
    }

    #[test]
    fn the_lightrag_replica_reproduces_its_slices_including_issue_1203() {
        let s = SummarySettings { replicate_lightrag: true, ..Default::default() };
        // tokens[1000:2000] is empty; tokens[-2000:1000] → [0:500] is all.
        assert_eq!(head_tail(&tokens(500), &s), tokens(500));
        // tokens[1000:2000] + tokens[500:1000].
        let mid = head_tail(&tokens(2_500), &s);
        assert_eq!(mid.len(), 1_500);
        assert_eq!((mid[0], mid[999], mid[1000], mid[1499]), (1_000, 1_999, 500, 999));
        // tokens[1000:2000] + tokens[3000:1000], which is empty: the bug.
        let long = head_tail(&tokens(5_000), &s);
        assert_eq!(long, (1_000..2_000).collect::<Vec<_>>());
        assert_eq!(py_slice(&tokens(10), -3, 20), vec![7, 8, 9]);
        assert!(py_slice(&tokens(10), 8, 2).is_empty());
    }

    #[test]
    fn the_description_keeps_each_documents_head_and_tail_in_gpt2_tokens() {
        let doc = "Alpha begins here. ".repeat(400) + &"Omega ends there. ".repeat(400);
        let s = SummarySettings { head: 50, tail: 50, ..Default::default() };
        let d = describe_dataset(&[&doc, "Short one."], &s);
        let (first, second) = d.split_once("\n\n").unwrap();
        assert!(first.starts_with("Alpha begins here.") && first.trim_end().ends_with("Omega ends there."));
        assert!(!first.contains("Alpha begins here. ".repeat(40).as_str()), "not the whole head");
        assert_eq!(tiktoken_rs::r50k_base_singleton().encode_ordinary(first).len(), 100);
        assert_eq!(second, "Short one.");
    }

    #[test]
    fn the_structured_reply_is_read_and_the_offline_one_has_every_question() {
        let reply = "Here you go:\n- **User 1**: A farmer\n  - Task 1: Plan crops\n    - Question 1: What grows best?\n    - Question 2: When to sow?\n  - Task 2: Sell produce\n    - Question 1: Where are markets?\n- User 2: A banker\n  - Task 1: Lend\n    - Question 1: Which farms repay?\n";
        let qs = parse(reply).unwrap();
        assert_eq!(qs.len(), 4);
        assert_eq!((qs[2].user, qs[2].task, qs[2].task_description.as_str()), (1, 2, "Sell produce"));
        assert_eq!(qs[3].user_description, "A banker");
        assert!(parse("- Question 1: Why?").unwrap_err().starts_with("line 1: a question before any user"));
        assert!(parse("I cannot help.").is_err());

        let s = SummarySettings { users: 3, tasks: 2, per_task: 4, ..Default::default() };
        let req = request("Ann walked to Hollin Cross. Then Ann met Ben at Hollin Cross.", &s);
        assert!(req.messages[0].content.contains("identify 3 potential users"));
        let qs = parse(&offline(&req).unwrap()).unwrap();
        assert_eq!(qs.len(), 3 * 2 * 4);
        assert!(qs.iter().any(|q| q.question.contains("Hollin") || q.question.contains("Ann")), "{qs:?}");
    }

    /// A set can be asked for an exact count, spread over every
    /// user and task; and the offline stand-in asks every question once.
    #[test]
    fn an_exact_count_is_spread_over_users_and_tasks_and_offline_questions_are_distinct() {
        let s = SummarySettings { count: Some(150), ..Default::default() };
        assert_eq!(s.asked_per_task(), 6, "5 × 5 × 6 = 150");
        let novel =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora/sherlock_holmes.txt"))
                .expect("the shared corpora");
        let description = describe_dataset(&[&novel], &SummarySettings::default());
        let req = request(&description, &s);
        assert!(req.messages[0].content.contains("generate 6 "), "the prompt asks for enough");
        let all = parse(&offline(&req).unwrap()).unwrap();
        assert_eq!(all.len(), 150);
        let distinct: std::collections::HashSet<&str> = all.iter().map(|q| q.question.as_str()).collect();
        assert_eq!(distinct.len(), 150, "no question asked twice");
        // 7 of 2 users × 2 tasks × 2: every group gives one before any gives two.
        let s = SummarySettings { users: 2, tasks: 2, count: Some(7), ..Default::default() };
        let got = select(parse(&offline(&request(&description, &s)).unwrap()).unwrap(), s.count);
        assert_eq!(got.len(), 7);
        let groups: Vec<(usize, usize)> = got.iter().map(|q| (q.user, q.task)).collect();
        assert_eq!(&groups[..4], &[(1, 1), (1, 2), (2, 1), (2, 2)]);
        assert_eq!(select(got.clone(), None).len(), 7, "no count: all kept");
    }
}
