//! `POST /api/0/query/` with the finished periods' answers kept: the
//! program's text and a period are the key, the period's JSON the value.

use std::sync::Arc;

use aw_models::{TimeInterval, Timestamp};
use aw_query::{EventSource, QueryError};

use crate::{Cache, Kind, Period};

/// Whether every read of `program` is inside the period it runs for. A
/// read is of the period `TIMEINTERVAL` names, so only a program that
/// never names it (that cannot assign it) is sure to; programs rarely do,
/// and one that only mentions it in a string or a comment is just not
/// kept.
fn reads_only_its_period(program: &str) -> bool {
    !program.contains("TIMEINTERVAL")
}

/// `aw_query::query_json`, the answers of finished periods taken from
/// `cache` or kept in it: the periods it lacks are computed together and
/// the array joined in the request's order. The answer is the same as
/// without a cache, errors included (a program that fails is never kept,
/// and a cached period is one where it did not fail); only the time
/// budget of backtracking regexes, shared by a request's periods, is
/// spent on fewer of them.
pub fn query_json(
    cache: &Cache,
    program: &str,
    timeperiods: &[TimeInterval],
    source: &dyn EventSource,
    now: Timestamp,
) -> Result<String, QueryError> {
    let periods: Vec<Period> = timeperiods
        .iter()
        .map(|p| Period::new(p.start, p.end))
        .collect();
    let finished: Vec<bool> = periods.iter().map(|&p| cache.is_finished(p, now)).collect();
    if !finished.contains(&true) || !reads_only_its_period(program) {
        return aw_query::query_json(program, timeperiods, source);
    }
    let text = Kind::Query.key(program);
    let asked: Vec<Period> = periods
        .iter()
        .zip(&finished)
        .filter(|(_, &done)| done)
        .map(|(&p, _)| p)
        .collect();
    cache.hints().note(&text, &asked);
    let mut found = cache.lookup::<String>(&text, &asked).into_iter();
    let mut answers: Vec<Option<Arc<String>>> = finished
        .iter()
        .map(|&done| if done { found.next().flatten() } else { None })
        .collect();
    let missing: Vec<usize> = (0..answers.len())
        .filter(|&i| answers[i].is_none())
        .collect();
    if !missing.is_empty() {
        let ticket = cache.ticket();
        let computed = aw_query::query_texts(
            program,
            &missing.iter().map(|&i| timeperiods[i]).collect::<Vec<_>>(),
            source,
        )?;
        for (&i, answer) in missing.iter().zip(computed) {
            let answer = Arc::new(answer);
            if finished[i] {
                let bytes = answer.len();
                cache.keep(ticket, &text, periods[i], Arc::clone(&answer), bytes);
            }
            answers[i] = Some(answer);
        }
    }
    let mut body =
        String::with_capacity(2 + answers.iter().flatten().map(|a| a.len() + 1).sum::<usize>());
    body.push('[');
    for (i, answer) in answers.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(answer.as_ref().expect("every period answered"));
    }
    body.push(']');
    Ok(body)
}
