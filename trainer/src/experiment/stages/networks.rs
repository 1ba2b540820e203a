//! An experiment's networks as the stages after training read them: its datasets' records,
//! its training runs' records as the report's rows, and the players of its evaluations (each
//! row's best network).

use anyhow::{Result, anyhow};

use super::id::{DataStage, TrainStage};
use super::stage::Ctx;
use super::train::training_data_cut;
use crate::experiment::evaluate::Player;
use crate::experiment::manifest::Experiment;
use crate::experiment::records::DataRecord;
use crate::experiment::report::{FeatureSetRow, RunSummary};

/// Every dataset of `e` by name with its stage's record, in the order
/// [`Experiment::datasets`] lists them.
pub(super) fn experiment_data(ctx: Ctx, e: &Experiment) -> Result<Vec<(String, DataRecord)>> {
    e.datasets()
        .map(|d| {
            let stage = DataStage {
                dataset: d.name.clone(),
            };
            Ok((d.name.clone(), ctx.need(stage)?))
        })
        .collect()
}

/// Every network of `e` (its training runs' records) on its datasets `records`, one row per
/// entry with its runs, and the data each entry trained on.
pub(super) fn trained_rows(
    ctx: Ctx,
    e: &Experiment,
    records: &[(String, DataRecord)],
) -> Result<(Vec<FeatureSetRow>, Vec<DataRecord>)> {
    let mut rows = Vec::new();
    let mut entry_data = Vec::new();
    for entry in e.entries() {
        let data = training_data_cut(e, &entry, records, ctx.options)?;
        let set = ctx
            .registry
            .feature_set(&entry.feature_set)
            .map_err(|err| anyhow!("{err}"))?;
        let mut runs = Vec::new();
        for run in 1..=e.runs {
            let stage = TrainStage {
                experiment: e.name.clone(),
                entry: entry.name.clone(),
                run,
            };
            let record = ctx.need(stage)?;
            runs.push(RunSummary {
                run,
                net: record.net,
                best_epoch: record.best_epoch,
                min_val_loss: record.min_val_loss,
                val_losses: record.val_losses,
                seconds: record.seconds,
                test_loss: None,
            });
        }
        rows.push(FeatureSetRow {
            feature_set: entry.name.clone(),
            features: set.size() as u64,
            runs,
            elo: Vec::new(),
            puzzles: None,
            nps: None,
            insight: None,
            attribution: None,
        });
        entry_data.push(data);
    }
    Ok((rows, entry_data))
}

/// The players of an experiment's evaluations: its networks, each row's best.
pub(super) fn players(ctx: Ctx, e: &Experiment) -> Result<Vec<Player>> {
    let records = experiment_data(ctx, e)?;
    let (rows, _) = trained_rows(ctx, e, &records)?;
    Ok(rows
        .iter()
        .map(|r| Player {
            name: r.feature_set.clone(),
            net: r.best().net.clone(),
            plugin_dir: ctx.options.plugin_dir.clone(),
        })
        .collect())
}
