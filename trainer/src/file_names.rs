//! Names as parts of file names: the one rule for every stage folder, job log and report
//! folder a run writes, and the one rule for the names a manifest gives (experiments, sweep
//! cells), which become parts of those.

/// `name` with every character other than ASCII letters, digits, `-`, `_`, `.` and `+`
/// replaced by `_` (`halfka_v2_hm^` → `halfka_v2_hm_`, `train:x:y:1` → `train_x_y_1`).
pub fn safe_file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether `name` may name an experiment or a sweep cell: not empty, and only ASCII letters,
/// digits, `-`, `_` and `.` (so that it is its own file name, and `+` stays free for sums).
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_characters_become_underscores() {
        assert_eq!(safe_file_name("halfka_v2_hm^"), "halfka_v2_hm_");
        assert_eq!(safe_file_name("k*all+all"), "k_all+all");
        assert_eq!(safe_file_name("train:a:b/c:1"), "train_a_b_c_1");
        assert_eq!(safe_file_name("ladder-1.5"), "ladder-1.5");
    }

    #[test]
    fn plain_names() {
        assert!(is_plain_name("ladder-converged-125000"));
        assert!(is_plain_name("v1.2_x"));
        for bad in ["", "a b", "a+b", "a/b", "ä"] {
            assert!(!is_plain_name(bad), "{bad}");
        }
    }
}
