//! `POST /api/0/query/` with the finished periods' answers kept: the
//! program's text and a period are the key, the period's JSON the value.

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
    if !periods.iter().any(|&p| cache.is_finished(p, now)) || !reads_only_its_period(program) {
        return aw_query::query_json(program, timeperiods, source);
    }
    let answers = cache.answers(
        &Kind::Query.key(program),
        &periods,
        now,
        |missing| {
            let asked: Vec<TimeInterval> = missing.iter().map(|&i| timeperiods[i]).collect();
            aw_query::query_texts(program, &asked, source)
        },
        String::len,
    )?;
    let mut body = String::with_capacity(2 + answers.iter().map(|a| a.len() + 1).sum::<usize>());
    body.push('[');
    for (i, answer) in answers.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(answer);
    }
    body.push(']');
    Ok(body)
}
