//! Answering `completion/complete` from a list of candidate values

use crate::schema::{CompleteResult, MAX_COMPLETION_VALUES};

/// The candidates that start with `prefix` (case-sensitive), in the order given, capped at
/// [`MAX_COMPLETION_VALUES`] (100, the specification's limit)
///
/// `total` is the number of matches; `hasMore` is `true` when some were cut, `false`
/// otherwise. Every candidate is looked at once, so pass a bounded list.
///
/// ```
/// use mcp_sansio::server::complete;
/// let result = complete("py", ["python", "pytorch", "rust"]);
/// assert_eq!(result.completion.values, ["python", "pytorch"]);
/// assert_eq!(result.completion.has_more, Some(false));
/// ```
pub fn complete<I>(prefix: &str, candidates: I) -> CompleteResult
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    let mut values = Vec::new();
    let mut total: u64 = 0;
    for candidate in candidates {
        let candidate = candidate.as_ref();
        if candidate.starts_with(prefix) {
            total += 1;
            if values.len() < MAX_COMPLETION_VALUES {
                values.push(candidate.to_owned());
            }
        }
    }
    let has_more = total > values.len() as u64;
    let mut result = CompleteResult::new(values);
    result.completion.total = Some(total);
    result.completion.has_more = Some(has_more);
    result
}
