//! Spans of integers (times, event starts, ids) sorted and joined: the
//! one rule for when two spans are one, for every list of them the
//! datastore keeps (changed spans, deleted time, a salvage's lost ids).

/// How a span's ends are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ends {
    /// `[low, high)`: the next span touches when it starts at `high`.
    HalfOpen,
    /// `[low, high]`: the next span touches when it starts at `high + 1`.
    Closed,
}

/// `spans` sorted, with every two that overlap or touch joined into one.
pub(crate) fn join(mut spans: Vec<(i64, i64)>, ends: Ends) -> Vec<(i64, i64)> {
    spans.sort_unstable();
    let mut joined = 0;
    for index in 0..spans.len() {
        let (low, high) = spans[index];
        if joined > 0 {
            let last = &mut spans[joined - 1];
            let reach = match ends {
                Ends::HalfOpen => last.1,
                Ends::Closed => last.1.saturating_add(1),
            };
            if low <= reach {
                last.1 = last.1.max(high);
                continue;
            }
        }
        spans[joined] = (low, high);
        joined += 1;
    }
    spans.truncate(joined);
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_nested_and_touching_spans_become_one() {
        let spans = vec![(10, 20), (0, 5), (12, 15), (20, 25), (30, 40), (5, 6)];
        assert_eq!(
            join(spans.clone(), Ends::HalfOpen),
            [(0, 6), (10, 25), (30, 40)]
        );
        assert_eq!(join(spans, Ends::Closed), [(0, 6), (10, 25), (30, 40)]);
    }

    #[test]
    fn closed_spans_touch_one_further_than_half_open_ones() {
        let spans = vec![(0, 4), (5, 9)];
        assert_eq!(join(spans.clone(), Ends::HalfOpen), [(0, 4), (5, 9)]);
        assert_eq!(join(spans, Ends::Closed), [(0, 9)]);
    }

    #[test]
    fn edges_of_the_range_and_empty_lists() {
        assert_eq!(join(Vec::new(), Ends::Closed), []);
        assert_eq!(
            join(vec![(i64::MAX - 1, i64::MAX), (i64::MIN, 0)], Ends::Closed),
            [(i64::MIN, 0), (i64::MAX - 1, i64::MAX)]
        );
        assert_eq!(
            join(vec![(5, i64::MAX), (i64::MAX, i64::MAX)], Ends::Closed),
            [(5, i64::MAX)]
        );
    }
}
