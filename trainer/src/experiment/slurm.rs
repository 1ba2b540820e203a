//! The Slurm executor of `trainer run`: every stage of the selected experiments that is not
//! done becomes an `sbatch` job running `trainer run MANIFEST --out OUT --stage ID`, held by
//! `--dependency=afterok:...` until the jobs of the stages it needs have succeeded, and
//! cancelled with them if one fails (`--kill-on-invalid-dep=yes`). Stages write into the same
//! content-keyed cache (`OUT`, a folder every node sees) as a local run, so a local run and a
//! Slurm run share their results, and a second submission finds every stage done and submits
//! nothing. The driver polls `squeue` until the jobs are gone (unless `--detach`), then checks
//! every submitted stage and names the log of the first that failed.
//!
//! An experiment's training runs go as one array job (task k runs the k-th), and a stage with
//! parts (a dataset's shards, a tournament's batches) has them run as an array job before it.
//! Slurm's own conventions are followed: `sbatch --parsable`, one log per job or task
//! (`OUT/slurm/STAGE-JOBID.log`, `...-ARRAYJOB_TASK.log`), resources per stage kind from the
//! manifest's `[cluster]` table (`partition`, `account`, `time`, `cpus`, `mem`, `gpus`, and the
//! same keys in `[cluster.data]`, `[cluster.train]`, `[cluster.eval]` and `[cluster.report]`)
//! under the command line's `--partition`, `--account` and `--time`.

use anyhow::{Context, Result, anyhow, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use plugin_api::PluginRegistry;

use super::executor::{check_feature_sets, stage_is_done};
use super::manifest::{JobResources, Manifest};
use super::options::RunOptions;
use super::stages::{self, StageId, TrainStage};

/// How long one Slurm client command (`sbatch`, `squeue`) may take.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

/// How often the driver asks `squeue` about its jobs.
const POLL: Duration = Duration::from_secs(2);

/// What `trainer run --executor slurm` was asked for beyond the manifest.
#[derive(Clone, Debug, Default)]
pub struct SlurmOptions {
    /// Resources for every job, over the manifest's `[cluster]` table.
    pub overrides: JobResources,
    /// Submit and return without waiting for the jobs.
    pub detach: bool,
    /// The `trainer` program the jobs run (this one, on a folder the nodes see).
    pub program: PathBuf,
    /// libtorch's threads in every job: those of the driver, since a training run repeats to
    /// the bit only on the same thread count (`crate::train::training_loop`), so that the jobs give what
    /// a local run on the driver's machine gives.
    pub threads: usize,
}

/// Runs the selected experiments of `manifest` through Slurm. Returns the number of jobs
/// submitted.
pub fn run(
    manifest: &Manifest,
    registry: &PluginRegistry,
    options: &RunOptions,
    slurm: &SlurmOptions,
) -> Result<usize> {
    let selected = manifest.select(&options.only)?;
    check_feature_sets(manifest, &selected, registry)?;
    client(Command::new("sbatch").arg("--version"))
        .map_err(|e| anyhow!("--executor slurm: no Slurm here (sbatch --version failed: {e:#})"))?;
    let logs = options.out.join("slurm");
    writable(&logs)?;
    let graph = stages::graph(manifest, &selected)?;
    let probe = options.probing();
    let mut missing = Vec::new();
    for stage in &graph {
        missing.push(!stage_is_done(manifest, registry, &probe, &stage.id)?);
    }
    let todo = missing.iter().filter(|&&m| m).count();
    eprintln!(
        "==> slurm: {} stage(s), {} done, {todo} to submit",
        graph.len(),
        graph.len() - todo
    );
    // Each submitted stage's job and log, by the stage's index.
    let mut jobs: BTreeMap<usize, Submitted> = BTreeMap::new();
    // The array job of a stage's parts (shards, batches), by the stage's index.
    let mut arrays: BTreeMap<usize, (String, Array)> = BTreeMap::new();
    let mut sbatch_calls = 0;
    for (i, stage) in graph.iter().enumerate() {
        if !missing[i] || jobs.contains_key(&i) {
            continue;
        }
        let resources = manifest
            .cluster
            .resources(stage.id.kind(), &slurm.overrides);
        let mut sbatch = |job: &SlurmJob, after: &[String]| {
            sbatch_calls += 1;
            submit(job, after, &resources, (manifest, options, slurm), &logs)
        };
        // The training runs of one experiment: one array job, task k running the k-th.
        if let StageId::Train(TrainStage { experiment, .. }) = &stage.id {
            let group: Vec<usize> = (i..graph.len())
                .take_while(
                    |&j| matches!(&graph[j].id, StageId::Train(t) if &t.experiment == experiment),
                )
                .filter(|&j| missing[j])
                .collect();
            if group.len() > 1 {
                let after = jobs_of(group.iter().flat_map(|&j| &graph[j].needs), &jobs);
                let list = List {
                    ids: group.iter().map(|&j| graph[j].id.clone()).collect(),
                    log: crate::file_names::safe_file_name(&format!("train:{experiment}")),
                };
                let job = sbatch(&SlurmJob::List(list.clone()), &after)?;
                eprintln!(
                    "==> slurm: {} training run(s) of {experiment} submitted as array job {job}",
                    group.len()
                );
                for (k, &j) in group.iter().enumerate() {
                    let log = logs.join(format!("{}-{job}_{k}.log", list.log));
                    jobs.insert(
                        j,
                        Submitted {
                            job: job.clone(),
                            log,
                        },
                    );
                }
                continue;
            }
        }
        let mut after = jobs_of(&stage.needs, &jobs);
        if let Some(array) = array_of(manifest, &stage.id)? {
            // A dataset in shards or a tournament in batches: those first, as one array job
            // after what the stage needs, and the stage after it.
            let job = sbatch(&SlurmJob::Array(array.clone()), &after)?;
            eprintln!(
                "==> slurm: {}0..{} submitted as array job {job}",
                array.prefix,
                array.parts.len() - 1
            );
            after.push(job.clone());
            arrays.insert(i, (job, array));
        }
        let job = sbatch(&SlurmJob::Stage(stage.id.clone()), &after)?;
        eprintln!("==> slurm: {} submitted as job {job}", stage.id);
        let log = log_of(&logs, &stage.id, &job);
        jobs.insert(i, Submitted { job, log });
    }
    if slurm.detach || jobs.is_empty() {
        return Ok(sbatch_calls);
    }
    let mut all: Vec<&str> = Vec::new();
    for job in jobs
        .values()
        .map(|s| s.job.as_str())
        .chain(arrays.values().map(|(job, _)| job.as_str()))
    {
        if !all.contains(&job) {
            all.push(job);
        }
    }
    wait(&all)?;
    // Every submitted stage must be done now; name the first that is not by its log.
    let mut failed = Vec::new();
    for (&i, submitted) in &jobs {
        if !stage_is_done(manifest, registry, &probe, &graph[i].id)? {
            failed.push((i, &submitted.job));
        }
    }
    let others = |n: usize| match n {
        0 => String::new(),
        n => format!("; {n} other stage(s) did not finish"),
    };
    if let Some(&(i, job)) = failed.iter().find(|(i, _)| jobs[i].log.exists()) {
        bail!(
            "--executor slurm: stage {} failed (job {job}): see {}{}",
            graph[i].id,
            jobs[&i].log.display(),
            others(failed.len() - 1)
        );
    }
    // A stage cancelled because a task of its array failed: name the task's log.
    for &(i, _) in &failed {
        let Some((job, array)) = arrays.get(&i) else {
            continue;
        };
        for (task, id) in array.parts.iter().enumerate() {
            if !stage_is_done(manifest, registry, &probe, id)? {
                bail!(
                    "--executor slurm: stage {id} failed (array job {job}): see {}{}",
                    logs.join(format!("{}-{job}_{task}.log", array.log))
                        .display(),
                    others(failed.len())
                );
            }
        }
    }
    if let Some(&(i, job)) = failed.first() {
        bail!(
            "--executor slurm: stage {} (job {job}) never ran and left no log (cancelled?)",
            graph[i].id
        );
    }
    Ok(sbatch_calls)
}

/// The jobs (each once) of the submitted stages among `needs`: what a job waits for.
fn jobs_of<'a>(
    needs: impl IntoIterator<Item = &'a usize>,
    jobs: &BTreeMap<usize, Submitted>,
) -> Vec<String> {
    let mut after: Vec<String> = Vec::new();
    for s in needs.into_iter().filter_map(|n| jobs.get(n)) {
        if !after.contains(&s.job) {
            after.push(s.job.clone());
        }
    }
    after
}

/// A submitted stage: its job (an array job's, for a task of one) and where its log will be.
struct Submitted {
    job: String,
    log: PathBuf,
}

/// Checks that the driver can write into `dir` (the shared folder's log folder).
fn writable(dir: &Path) -> Result<()> {
    let probe = dir.join(format!(".writable-{}", std::process::id()));
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&probe, b"ok"))
        .and_then(|()| std::fs::remove_file(&probe))
        .with_context(|| format!("--executor slurm: cannot write into {}", dir.display()))
}

/// A stage's name as a file name.
fn file_name(id: &StageId) -> String {
    crate::file_names::safe_file_name(&id.to_string())
}

/// The log of `id`'s job `job`.
fn log_of(logs: &Path, id: &StageId, job: &str) -> PathBuf {
    logs.join(format!("{}-{job}.log", file_name(id)))
}

/// Quotes `s` for `sh` (the shell `sbatch --wrap` runs).
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// What one `sbatch` submits: a stage, the parts of one as an array job, or several stages as
/// an array job.
enum SlurmJob {
    /// One stage.
    Stage(StageId),
    /// The parts of a stage, task i running stage `PREFIXi`.
    Array(Array),
    /// Stages that need the same jobs (an experiment's training runs), task k running the k-th.
    List(List),
}

/// Stages run as one array job.
#[derive(Clone, Debug)]
struct List {
    /// The stages, by task.
    ids: Vec<StageId>,
    /// The logs' file name before Slurm's `-ARRAYJOB_TASK.log`.
    log: String,
}

/// The parts of a stage run as one array job: a dataset's shards (`data:D:i`) or a
/// tournament's batches (`eval:E:V:i`).
#[derive(Clone, Debug)]
struct Array {
    /// The parts, task `i` running `parts[i]`.
    parts: Vec<StageId>,
    /// The parts' stage ids without the task number.
    prefix: String,
    /// The logs' file name before Slurm's `-ARRAYJOB_TASK.log`.
    log: String,
}

/// The array job that must run before stage `id`, if it has parts: the shards of a dataset
/// generated in shards, the batches of a tournament played in batches.
fn array_of(manifest: &Manifest, id: &StageId) -> Result<Option<Array>> {
    let parts = id.parts(manifest)?;
    let Some(prefix) = id.parts_prefix().filter(|_| !parts.is_empty()) else {
        return Ok(None);
    };
    let log = format!("{}parts", crate::file_names::safe_file_name(&prefix));
    Ok(Some(Array { parts, prefix, log }))
}

/// Submits `job` after the jobs `after`; returns its job id.
fn submit(
    job: &SlurmJob,
    after: &[String],
    resources: &JobResources,
    (manifest, options, slurm): (&Manifest, &RunOptions, &SlurmOptions),
    logs: &Path,
) -> Result<String> {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut prelude = String::new();
    let (stage, name, log) = match job {
        SlurmJob::Stage(id) => (
            quote(&id.to_string()),
            format!("nnue:{id}"),
            format!("{}-%j.log", file_name(id)),
        ),
        SlurmJob::Array(array) => (
            // The array task's part, from Slurm's environment.
            format!("{}\"$SLURM_ARRAY_TASK_ID\"", quote(&array.prefix)),
            format!("nnue:{}*", array.prefix),
            format!("{}-%A_%a.log", array.log),
        ),
        SlurmJob::List(list) => {
            // The task's stage: the list as the shell's arguments, shifted by the task id.
            let ids: Vec<String> = list.ids.iter().map(|id| quote(&id.to_string())).collect();
            prelude = format!("set -- {}; shift \"$SLURM_ARRAY_TASK_ID\"; ", ids.join(" "));
            (
                "\"$1\"".to_string(),
                format!("nnue:{}", list.log),
                format!("{}-%A_%a.log", list.log),
            )
        }
    };
    let mut words = vec![quote(&absolute(&slurm.program).to_string_lossy())];
    if let Some(dir) = &options.plugin_dir {
        words.push("--plugin-dir".into());
        words.push(quote(&absolute(dir).to_string_lossy()));
    }
    words.extend([
        "run".to_string(),
        quote(&absolute(&manifest.path).to_string_lossy()),
        "--out".into(),
        quote(&absolute(&options.out).to_string_lossy()),
        "--stage".into(),
        stage,
        "--no-progress".into(),
        "--threads".into(),
        slurm.threads.to_string(),
    ]);
    if resources.gpus.unwrap_or(0) > 0 {
        words.extend(["--device".to_string(), "cuda".to_string()]);
    }
    let mut sbatch = Command::new("sbatch");
    sbatch
        .arg("--parsable")
        .arg(format!("--job-name={name}"))
        .arg(format!("--output={}", absolute(logs).join(log).display()))
        .arg("--kill-on-invalid-dep=yes");
    match job {
        SlurmJob::Array(array) => {
            sbatch.arg(format!("--array=0-{}", array.parts.len() - 1));
        }
        SlurmJob::List(list) => {
            sbatch.arg(format!("--array=0-{}", list.ids.len() - 1));
        }
        SlurmJob::Stage(_) => {}
    }
    if !after.is_empty() {
        sbatch.arg(format!("--dependency=afterok:{}", after.join(":")));
    }
    for (flag, value) in [
        ("partition", resources.partition.clone()),
        ("account", resources.account.clone()),
        ("time", resources.time.clone()),
        ("mem", resources.mem.clone()),
        ("cpus-per-task", resources.cpus.map(|c| c.get().to_string())),
        (
            "gres",
            resources
                .gpus
                .filter(|&g| g > 0)
                .map(|g| format!("gpu:{g}")),
        ),
    ] {
        if let Some(v) = value {
            sbatch.arg(format!("--{flag}={v}"));
        }
    }
    sbatch.arg(format!("--wrap={prelude}{}", words.join(" ")));
    let what = match job {
        SlurmJob::Stage(id) => format!("stage {id}"),
        SlurmJob::Array(array) => format!("the parts {}*", array.prefix),
        SlurmJob::List(list) => format!("the stages {}", list.log),
    };
    let out =
        client(&mut sbatch).with_context(|| format!("--executor slurm: sbatch refused {what}"))?;
    // --parsable prints "JOBID" or "JOBID;CLUSTER".
    let id = out.trim().split(';').next().unwrap_or_default().to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        bail!(
            "--executor slurm: sbatch answered '{}' for {what}, not a job id",
            out.trim()
        );
    }
    Ok(id)
}

/// Runs a Slurm client command with a time limit; returns its standard output, or an error
/// with its standard error.
fn client(cmd: &mut Command) -> Result<String> {
    let name = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {name}"))?;
    let started = Instant::now();
    loop {
        if child.try_wait()?.is_some() {
            break;
        }
        if started.elapsed() > CLIENT_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "{name} did not answer within {} s",
                CLIENT_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let err = err.trim().replace('\n', " ");
        // Slurm's commands name themselves ("sbatch: error: ...").
        match err.starts_with(&format!("{name}:")) {
            true => bail!("{err}"),
            false => bail!("{name}: {err}"),
        }
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Waits until none of `jobs` is in `squeue`, showing how many are pending, running and
/// finished, with an estimate of the time left.
fn wait(ids: &[&str]) -> Result<()> {
    let started = Instant::now();
    let mut last = String::new();
    loop {
        let out = client(Command::new("squeue").args(["-h", "-o", "%i %T", "-j", &ids.join(",")]))
            .or_else(|e| {
                // squeue refuses a list of jobs that have all left the queue.
                if format!("{e:#}").contains("Invalid job id") {
                    Ok(String::new())
                } else {
                    Err(e)
                }
            })?;
        // Each job's state; an array job's tasks are lines `JOB_TASK` (or `JOB_[0-3]` while
        // pending): the job runs while any task runs.
        let mut states: BTreeMap<&str, bool> = BTreeMap::new();
        for line in out.lines() {
            let mut words = line.split_whitespace();
            let (Some(job), Some(state)) = (words.next(), words.next()) else {
                continue;
            };
            let job = job.split('_').next().unwrap_or(job);
            if let Some(&id) = ids.iter().find(|&&id| id == job) {
                *states.entry(id).or_default() |= state != "PENDING";
            }
        }
        let running = states.values().filter(|&&r| r).count();
        let pending = states.len() - running;
        let finished = ids.len() - states.len();
        let line = format!(
            "{pending} pending, {running} running, {finished}/{} finished",
            ids.len()
        );
        if line != last {
            let eta = match finished {
                0 => String::new(),
                f => {
                    let left = started.elapsed().as_secs_f64() / f as f64 * (ids.len() - f) as f64;
                    format!(", about {:.0} s left", left)
                }
            };
            eprintln!("==> slurm: {line}{eta}");
            last = line;
        }
        if pending + running == 0 {
            return Ok(());
        }
        std::thread::sleep(POLL);
    }
}
