//! A manifest run as a graph of stages: data → training runs → evaluations → report (→ the
//! ladder of a sweep over `train_positions`, after every rung's report), built from what each
//! kind of stage says it needs (`Stage::needs`). The local executor
//! walks it in order in one process; the Slurm executor ([`crate::experiment::slurm`]) submits
//! each stage that is not done as a job that runs `trainer run MANIFEST --stage ID`, after the
//! jobs of the stages it needs.

use anyhow::Result;
use std::path::Path;

use plugin_api::PluginRegistry;

use super::id::{DataStage, LadderStage, ReportStage, StageId};
use super::stage::{PlannedStage, StagePlan};
use crate::experiment::manifest::{Experiment, Manifest};

/// A stage and the stages it needs (indices into the same graph, all before it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Which stage.
    pub id: StageId,
    /// The stages whose results it reads.
    pub needs: Vec<usize>,
}

/// The stages of `selected` (and of the experiments their `init_from` starts from), in an
/// order where every stage comes after those it needs: the datasets first (a dataset read by
/// several experiments is one stage), then each experiment's stages up to its report, each
/// after its needs in the order it reads them (its training runs one after another, each
/// after the run it starts from; its evaluations; its report); last, the ladder of every data
/// ladder all of whose rungs are selected.
pub fn graph(manifest: &Manifest, selected: &[&Experiment]) -> Result<Vec<Node>> {
    let mut nodes: Vec<Node> = Vec::new();
    for e in selected {
        for dataset in datasets(manifest, e, None)? {
            add(manifest, DataStage { dataset }.into(), &mut nodes)?;
        }
    }
    for e in selected {
        let report = ReportStage {
            experiment: e.name.clone(),
        };
        add(manifest, report.into(), &mut nodes)?;
    }
    for group in manifest.selected_ladders(selected) {
        add(manifest, LadderStage { group }.into(), &mut nodes)?;
    }
    Ok(nodes)
}

/// The index of `id` in `nodes`, adding it (after the stages it needs, added first) if it is
/// not there.
fn add(manifest: &Manifest, id: StageId, nodes: &mut Vec<Node>) -> Result<usize> {
    if let Some(i) = nodes.iter().position(|s| s.id == id) {
        return Ok(i);
    }
    let needs = id
        .needs(manifest)?
        .into_iter()
        .map(|need| add(manifest, need, nodes))
        .collect::<Result<Vec<usize>>>()?;
    nodes.push(Node { id, needs });
    Ok(nodes.len() - 1)
}

/// The datasets the networks `names` of `e` (all when `None`) train and are validated on,
/// after those of the runs of the experiment their `init_from` starts from.
fn datasets(manifest: &Manifest, e: &Experiment, names: Option<&[String]>) -> Result<Vec<String>> {
    let entries: Vec<_> = e
        .entries()
        .into_iter()
        .filter(|x| names.is_none_or(|n| n.contains(&x.name)))
        .collect();
    let mut out = Vec::new();
    if let Some(name) = &e.init_from {
        let wanted: Vec<String> = entries.iter().map(|x| x.name.clone()).collect();
        out = datasets(manifest, manifest.experiment(name)?, Some(&wanted))?;
    }
    out.extend(
        entries
            .iter()
            .map(|x| &x.data)
            .chain(&e.val_data)
            .chain(&e.test_data)
            .map(|d| d.name.clone()),
    );
    Ok(out)
}

/// The folder of every stage of the experiments `selected` whose key the manifest alone
/// decides, in the order of [`graph`], with its stage's name: every generated dataset's,
/// every ladder rung's, and every training run's that does not start from another run's
/// network (an `init_from` run's key holds that network's digest, as an evaluation's holds
/// its players'). Nothing is computed or read but the manifest's own input files.
pub fn planned_folders(
    manifest: &Manifest,
    registry: &PluginRegistry,
    selected: &[&Experiment],
    out: &Path,
) -> Result<Vec<PlannedStage>> {
    let plan = StagePlan {
        manifest,
        registry,
        out,
    };
    let mut folders: Vec<PlannedStage> = Vec::new();
    for node in graph(manifest, selected)? {
        for planned in node.id.stage().planned(plan)? {
            // A rung that several runs cut is named after the first.
            if folders.iter().all(|p| p.dir != planned.dir) {
                folders.push(planned);
            }
        }
    }
    Ok(folders)
}
