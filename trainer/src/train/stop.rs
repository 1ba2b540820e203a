//! Training to convergence: which epoch is the run's best, and when it has stopped improving.
//!
//! The best epoch is the one of lowest validation loss (the first of equals): the network a
//! run hands over, as a "save best" checkpoint keeps it. An epoch *improves* when its loss is
//! below the lowest before it by more than `min_delta`; with a patience of K the run ends once
//! K epochs in a row have not improved (PyTorch Lightning's `EarlyStopping(min_delta,
//! patience)`, the convention of the field's trainers); the epoch cap still bounds it. Both
//! answers are functions of the validation losses alone, so a resumed run reaches them exactly
//! as an uninterrupted one.

use serde::{Deserialize, Serialize};

use crate::checked::{Positive, UnitReal};

/// When a run stops before its epoch cap, and which epoch it hands over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StopRule {
    /// Stop after this many epochs without improvement (`None`: train to the cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patience: Option<Positive>,
    /// The least fall of the validation loss that counts as an improvement.
    #[serde(default, skip_serializing_if = "crate::checked::is_zero")]
    pub min_delta: UnitReal,
}

impl StopRule {
    /// The best epoch (0-based index into `val_losses`): the lowest loss, the first of equals.
    /// `None` for no epochs.
    pub fn best(&self, val_losses: &[f64]) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (k, &loss) in val_losses.iter().enumerate() {
            if best.is_none_or(|b| loss < val_losses[b]) {
                best = Some(k);
            }
        }
        best
    }

    /// The last epoch that improved by more than `min_delta` on every epoch before it (the
    /// first epoch counts as one).
    fn last_improvement(&self, val_losses: &[f64]) -> Option<usize> {
        let mut lowest = f64::INFINITY;
        let mut last = None;
        for (k, &loss) in val_losses.iter().enumerate() {
            if last.is_none() || loss < lowest - self.min_delta.get() {
                last = Some(k);
            }
            lowest = lowest.min(loss);
        }
        last
    }

    /// Whether the run has converged: `patience` epochs have passed since the last one that
    /// improved.
    pub fn converged(&self, val_losses: &[f64]) -> bool {
        match (self.patience, self.last_improvement(val_losses)) {
            (Some(patience), Some(last)) => (val_losses.len() - 1 - last) as u64 >= patience.get(),
            _ => false,
        }
    }

    /// Why the rule ended a run with these validation losses, in its own terms (`None` where
    /// it has not): how many epochs have passed since the last that improved, which that was,
    /// and what counted as improving. With a `min_delta` the last improvement may come before
    /// the best epoch (a fall smaller than `min_delta` is a new best, not an improvement).
    pub fn reason(&self, val_losses: &[f64]) -> Option<String> {
        let patience = self.patience.filter(|_| self.converged(val_losses))?;
        let last = self.last_improvement(val_losses)?;
        let since = val_losses.len() - 1 - last;
        Some(match self.min_delta.get() > 0.0 {
            true => format!(
                "{since} epochs (patience {patience}) since epoch {}, the last to lower the lowest validation loss by more than {}",
                last + 1,
                self.min_delta
            ),
            false => format!(
                "{since} epochs (patience {patience}) since epoch {}, the last to lower the lowest validation loss",
                last + 1
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_epoch_is_the_lowest_loss() {
        let rule = StopRule {
            patience: Some(Positive::new(2)),
            min_delta: UnitReal::new(0.01),
        };
        assert_eq!(rule.best(&[]), None);
        assert_eq!(rule.best(&[0.5]), Some(0));
        // Any fall makes a new best, whatever min_delta.
        assert_eq!(rule.best(&[0.5, 0.495, 0.48]), Some(2));
        assert_eq!(rule.best(&[0.5, 0.495, 0.497]), Some(1));
        // The first of equals.
        assert_eq!(StopRule::default().best(&[0.5, 0.4, 0.4]), Some(1));
    }

    #[test]
    fn converged_after_patience_epochs_without_improvement() {
        let rule = StopRule {
            patience: Some(Positive::new(2)),
            min_delta: UnitReal::new(0.0),
        };
        assert!(!rule.converged(&[]));
        assert!(!rule.converged(&[0.5, 0.4]));
        assert!(!rule.converged(&[0.5, 0.4, 0.41]));
        assert!(rule.converged(&[0.5, 0.4, 0.41, 0.45]));
        assert!(!rule.converged(&[0.5, 0.4, 0.41, 0.39]));
        // A tie is no improvement.
        assert!(rule.converged(&[0.5, 0.4, 0.4, 0.4]));
        // No patience: never stops early.
        assert!(!StopRule::default().converged(&[0.1, 0.2, 0.3, 0.4]));
    }

    #[test]
    fn falls_within_min_delta_are_a_plateau() {
        let rule = StopRule {
            patience: Some(Positive::new(2)),
            min_delta: UnitReal::new(0.01),
        };
        // 0.5 → 0.495 → 0.49: each a fall, none by more than 0.01 below the lowest before.
        assert!(rule.converged(&[0.5, 0.495, 0.49]));
        assert_eq!(rule.best(&[0.5, 0.495, 0.49]), Some(2));
        // 0.485 is more than 0.01 below 0.5, the lowest before epoch 1: it improves.
        assert!(!rule.converged(&[0.5, 0.485, 0.48]));
        // A fall is measured from the lowest so far (0.485), not from the epoch before.
        assert!(!rule.converged(&[0.5, 0.485, 0.495]));
        assert!(rule.converged(&[0.5, 0.485, 0.495, 0.480]));
        assert!(!rule.converged(&[0.5, 0.485, 0.495, 0.474]));
    }

    #[test]
    fn the_reason_names_the_last_improvement_not_the_best_epoch() {
        let rule = StopRule {
            patience: Some(Positive::new(2)),
            min_delta: UnitReal::new(0.01),
        };
        // Epoch 3 is the best (0.49), but the last to improve by more than 0.01 is epoch 1.
        let losses = [0.5, 0.495, 0.49];
        assert_eq!(rule.best(&losses), Some(2));
        assert_eq!(
            rule.reason(&losses).unwrap(),
            "2 epochs (patience 2) since epoch 1, the last to lower the lowest validation loss by more than 0.01"
        );
        assert_eq!(rule.reason(&[0.5, 0.485, 0.48]), None);
        let plain = StopRule {
            min_delta: UnitReal::new(0.0),
            ..rule
        };
        assert_eq!(
            plain.reason(&[0.5, 0.4, 0.41, 0.45]).unwrap(),
            "2 epochs (patience 2) since epoch 2, the last to lower the lowest validation loss"
        );
        assert_eq!(StopRule::default().reason(&[0.1, 0.2, 0.3]), None);
    }
}
