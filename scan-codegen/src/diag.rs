//! Error collection. Every stage reports into one `Diagnostics` and keeps going where it
//! can, so the user sees all mistakes at once; each error is spanned on the user's token.

use proc_macro2::Span;

#[derive(Default)]
pub struct Diagnostics {
    errors: Vec<syn::Error>,
}

impl Diagnostics {
    pub fn error(&mut self, span: Span, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    /// An error spanned on every token of `tokens` (a whole type, not its first token).
    pub fn error_spanned(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    pub fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// The collected errors as one combined `syn::Error`, if any.
    pub fn into_result(self) -> Result<(), syn::Error> {
        let mut errors = self.errors.into_iter();
        match errors.next() {
            None => Ok(()),
            Some(mut first) => {
                for e in errors {
                    first.combine(e);
                }
                Err(first)
            }
        }
    }
}

/// The candidate closest to `name` by edit distance (case-insensitive), if it
/// is close enough to be a likely typo: at most a third of the name's length (at least 1)
/// edits away. For "did you mean" hints.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let name = name.to_lowercase();
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(&name, &c.to_lowercase()), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Edit distance between `a` and `b`: insertions, deletions, substitutions and swaps of two
/// neighbouring characters (`tnah` is one edit from `tanh`), each counting 1 (the optimal
/// string alignment distance).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_names_within_a_third_of_the_length() {
        let names = ["tanh", "sigmoid", "relu", "logsumexp", "sum"];
        assert_eq!(closest("tnah", names), Some("tanh"));
        assert_eq!(closest("sigmod", names), Some("sigmoid"));
        assert_eq!(closest("gelu", names), Some("relu"));
        assert_eq!(closest("LogSumExp", names), Some("logsumexp"));
        assert_eq!(closest("softmax", names), None);
        assert_eq!(closest("", names), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("tnah", "tanh"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
