//! `trainer run --executor slurm` against a real Slurm: a throwaway single-node cluster of
//! Debian's `slurmctld`, `slurmd` and `munge` (`scripts/slurm-local.sh`), a small manifest run
//! through it (its data in two shards and its tournament in two batches: array jobs) and
//! locally with the same report and
//! the same data files, a second submission that submits nothing, jobs
//! cancelled mid-way (`scancel`) and a rerun that resubmits only the stages without results,
//! and the one-line errors of a partition that does not exist, a stage that fails and a
//! machine without Slurm.

#[path = "common/output.rs"]
mod output;
#[path = "common/paths.rs"]
mod paths;
#[path = "common/stages.rs"]
mod stages;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use output::text;
use paths::shared;

/// The local cluster; stopped (its daemons by their PIDs) when dropped, also when a test fails.
struct Cluster {
    dir: tempfile::TempDir,
}

impl Cluster {
    fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let o = Command::new("bash")
            .arg(script())
            .arg("start")
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "the local Slurm did not start:\n{}",
            text(&o)
        );
        Cluster { dir }
    }

    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    /// A Slurm client command of this cluster.
    fn client(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", self.conf());
        c
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(self.dir.path())
            .output();
    }
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/slurm-local.sh")
}

fn trainer(cluster: &Cluster) -> Command {
    let mut c = cluster.client(env!("CARGO_BIN_EXE_trainer"));
    c.arg("--plugin-dir").arg(paths::plugin_dir());
    c
}

/// Two feature sets on generated data (in `shards` shards), a short tournament (in two
/// batches): a few seconds of work per stage.
fn manifest(dir: &Path, shards: u64, extra: &str) -> PathBuf {
    let book = shared().join("data/noob_3moves.epd");
    let path = dir.join("m.toml");
    std::fs::write(
        &path,
        format!(
            r#"
[data.tiny]
generate = {{ games = 24, val_games = 4, nodes = 200, book = "{book}", write_minply = 4, seed = 3, threads = 1, shards = {shards}{extra} }}

[evaluation.e]
reference = "all"
tournament = {{ rounds = 2, nodes = 200, openings = "{book}", concurrency = 1, batches = 2 }}

[cluster]
cpus = 1

[[experiment]]
name = "tiny"
feature_sets = ["all", "all+pv"]
data = "tiny"
evaluation = "e"
insight = false
l1 = 32
l2 = 8
batch_size = 256
epochs = 2
epoch_positions = 2000
val_positions = 300
runs = 1
"#,
            book = book.display()
        ),
    )
    .unwrap();
    path
}

/// `report.json` with what may differ between two runs of the same manifest: timings, and the
/// output folder and the keys of the stage folders under it (training keys name the data files).
fn normalized_report(out: &Path) -> String {
    let text = std::fs::read_to_string(out.join("reports/tiny/report.json")).unwrap();
    let text = text.replace(&out.display().to_string(), "OUT");
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("seconds");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            serde_json::Value::String(s) => {
                // `NAME-0123456789abcdef` folders: the key's 16 hex digits.
                let mut out = String::new();
                for part in s.split('/') {
                    let keyed = part.len() > 17
                        && part.as_bytes()[part.len() - 17] == b'-'
                        && part[part.len() - 16..]
                            .chars()
                            .all(|c| c.is_ascii_hexdigit());
                    if !out.is_empty() {
                        out.push('/');
                    }
                    out.push_str(if keyed {
                        &part[..part.len() - 17]
                    } else {
                        part
                    });
                }
                *s = out;
            }
            _ => {}
        }
    }
    strip(&mut json);
    serde_json::to_string_pretty(&json).unwrap()
}

/// The games of the tournament without the times of the moves.
fn games(out: &Path) -> String {
    let dir = std::fs::read_dir(out.join("tournament"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let pgn = std::fs::read_to_string(dir.join("games.pgn")).unwrap();
    let mut kept = String::new();
    let mut rest = pgn.as_str();
    while let Some(start) = rest.find('{') {
        kept.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .map_or(rest.len(), |e| start + e + 1);
        // Keep the score and depth, drop the time.
        let comment = &rest[start..end];
        kept.push_str(comment.split_whitespace().next().unwrap_or_default());
        rest = &rest[end..];
    }
    kept.push_str(rest);
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `trainer run` of `manifest` into `out` on the local executor, which must succeed: what a
/// Slurm run is compared with.
fn local_run(cluster: &Cluster, manifest: &Path, out: &Path) {
    let o = trainer(cluster)
        .args(["run", "--no-progress", "--out"])
        .arg(out)
        .arg(manifest)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
}

/// `manifest` run locally into `dir/local` and through Slurm into `dir/slurm`, both of which
/// must succeed: the two output folders and the Slurm run's log.
fn local_and_slurm_runs(
    cluster: &Cluster,
    manifest: &Path,
    dir: &Path,
) -> (PathBuf, PathBuf, String) {
    let local = dir.join("local");
    local_run(cluster, manifest, &local);
    let out = dir.join("slurm");
    let o = slurm_run(cluster, manifest, &out, &[]);
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    (local, out, log)
}

/// `trainer run --executor slurm` in the manifest's folder (a relative `out` is inside it).
fn slurm_run(cluster: &Cluster, manifest: &Path, out: &Path, extra: &[&str]) -> Output {
    trainer(cluster)
        .current_dir(manifest.parent().unwrap())
        .args(["run", "--executor", "slurm", "--no-progress", "--out"])
        .arg(out)
        .args(extra)
        .arg(manifest)
        .output()
        .unwrap()
}

/// Waits (bounded) until `done` holds.
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "waited too long for {what}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_manifest_runs_through_slurm_as_it_runs_locally_and_resumes_after_scancel() {
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let m = manifest(dir.path(), 2, "");

    let (local, out, log) = local_and_slurm_runs(&cluster, &m, dir.path());
    assert!(log.contains("5 stage(s), 0 done, 5 to submit"), "{log}");
    assert!(
        log.contains("2 training run(s) of tiny submitted as array job"),
        "{log}"
    );
    assert!(
        log.contains("data:tiny:0..1 submitted as array job"),
        "{log}"
    );
    assert!(
        log.contains("eval:tiny:e:0..1 submitted as array job"),
        "{log}"
    );
    assert_eq!(normalized_report(&out), normalized_report(&local));
    assert_eq!(games(&out), games(&local));
    for shard in [
        "train-0-of-2.binpack",
        "train-1-of-2.binpack",
        "val.binpack",
    ] {
        let file = |root: &Path| {
            let dir = std::fs::read_dir(root.join("data"))
                .unwrap()
                .next()
                .unwrap()
                .unwrap();
            std::fs::read(dir.path().join(shard)).unwrap()
        };
        assert!(file(&out) == file(&local), "{shard} differs");
    }
    for stage in [
        "data_tiny_parts",
        "eval_tiny_e_parts",
        "data_tiny",
        "train_tiny",
        "eval_tiny_e",
        "report_tiny",
    ] {
        let logs: Vec<String> = std::fs::read_dir(out.join("slurm"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            logs.iter()
                .any(|l| l.starts_with(&format!("{stage}-")) && l.ends_with(".log")),
            "no log of {stage}: {logs:?}"
        );
    }

    // Everything is done: nothing is submitted.
    let o = slurm_run(&cluster, &m, &out, &[]);
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    assert!(log.contains("5 stage(s), 5 done, 0 to submit"), "{log}");
    assert!(log.contains("ran 0 job(s)"), "{log}");

    // Submitted and left (--detach), cancelled once the data exist: the rerun submits only
    // the stages without results and ends with the same report; the output folder named
    // relatively, as `runs/` is by default (the jobs get it absolutely).
    let cut = dir.path().join("cut");
    let o = slurm_run(&cluster, &m, Path::new("cut"), &["--detach"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("submitted 6 job(s)"), "{}", text(&o));
    wait_until("the data stage", || {
        std::fs::read_dir(cut.join("data"))
            .map(|mut d| d.any(|e| e.unwrap().path().join("done.json").exists()))
            .unwrap_or(false)
    });
    let o = cluster
        .client("scancel")
        .arg("--user")
        .arg(whoami())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    wait_until("an empty queue", || {
        let o = cluster
            .client("squeue")
            .args(["-h", "-o", "%i"])
            .output()
            .unwrap();
        o.status.success() && o.stdout.iter().all(u8::is_ascii_whitespace)
    });
    let o = slurm_run(&cluster, &m, Path::new("cut"), &[]);
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    let counts = log
        .lines()
        .find_map(|l| l.strip_prefix("==> slurm: 5 stage(s), "))
        .unwrap_or_else(|| panic!("no plan in: {log}"));
    let done: usize = counts.split(' ').next().unwrap().parse().unwrap();
    assert!((1..5).contains(&done), "{counts}");
    assert!(!log.contains("data:tiny submitted"), "{log}");
    assert_eq!(normalized_report(&cut), normalized_report(&local));
    let before = stages::stage_files(&cut);
    let o = slurm_run(&cluster, &m, Path::new("cut"), &[]);
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    assert!(log.contains("5 stage(s), 5 done, 0 to submit"), "{log}");
    assert_eq!(stages::stage_files(&cut), before, "{log}");
}

/// A data ladder through Slurm: the training runs of a rung (one array job) cut the rung's
/// positions at once, one of them waiting on the other's lock; the ladder stage runs after
/// every rung's report; the ladder is the local run's, and a rerun finds every stage done.
#[test]
fn a_data_ladder_runs_through_slurm_as_it_runs_locally() {
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let m = manifest(dir.path(), 1, "");
    let text_of = std::fs::read_to_string(&m).unwrap();
    std::fs::write(
        &m,
        text_of.replace(
            "name = \"tiny\"\n",
            "name = \"lad\"\nsweep = { train_positions = [100, 200] }\n",
        ),
    )
    .unwrap();
    let (local, out, log) = local_and_slurm_runs(&cluster, &m, dir.path());
    // The data, two rungs of two training runs, an evaluation and a report each, the ladder.
    assert!(log.contains("10 stage(s), 0 done, 10 to submit"), "{log}");
    let ladder =
        |root: &Path| std::fs::read_to_string(root.join("reports/lad/ladder.json")).unwrap();
    assert_eq!(ladder(&out), ladder(&local));
    assert!(
        ladder(&out).contains("\"positions\": 200"),
        "{}",
        ladder(&out)
    );
    let o = slurm_run(&cluster, &m, &out, &[]);
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    assert!(log.contains("10 stage(s), 10 done, 0 to submit"), "{log}");
}

#[test]
fn slurm_errors_are_one_line_and_name_the_failing_stage() {
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let one_line = |o: &Output| -> String {
        assert!(!o.status.success(), "accepted:\n{}", text(o));
        let err = String::from_utf8_lossy(&o.stderr);
        let last = err.trim().lines().last().unwrap_or_default().to_string();
        assert!(last.starts_with("error: "), "{err}");
        last
    };
    // The log an error names: "... see LOG; ...".
    let log_named = |err: &str| -> String {
        let after = err.split("see ").nth(1).unwrap_or_default();
        after.split(';').next().unwrap_or_default().to_string()
    };

    // A partition the cluster does not have: sbatch's refusal, before any job runs.
    let m = manifest(dir.path(), 2, "");
    let out = dir.path().join("a");
    let err = one_line(&slurm_run(&cluster, &m, &out, &["--partition", "nowhere"]));
    assert!(
        err.contains("sbatch refused the parts data:tiny:*"),
        "{err}"
    );
    assert!(err.contains("invalid partition"), "{err}");

    // A stage that fails: its log is named, its dependants are cancelled by Slurm.
    let bad = dir.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    let m = manifest(&bad, 1, ", labeler = \"cmd=/bin/false\"");
    let out = dir.path().join("b");
    let err = one_line(&slurm_run(&cluster, &m, &out, &[]));
    assert!(err.contains("stage data:tiny failed (job "), "{err}");
    let log = log_named(&err);
    assert!(Path::new(&log).is_file(), "{err}");
    assert!(err.contains("4 other stage(s) did not finish"), "{err}");

    // A shard that fails: its log is named (the dataset's stage was cancelled by Slurm).
    let bad = dir.path().join("bad-shards");
    std::fs::create_dir_all(&bad).unwrap();
    let m = manifest(&bad, 3, ", labeler = \"cmd=/bin/false\"");
    let out = dir.path().join("b3");
    let err = one_line(&slurm_run(&cluster, &m, &out, &[]));
    assert!(
        err.contains("stage data:tiny:0 failed (array job "),
        "{err}"
    );
    let log = log_named(&err);
    assert!(
        log.ends_with("_0.log") && Path::new(&log).is_file(),
        "{err}"
    );

    // An output folder the driver cannot write into (a path under a file).
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let m = manifest(dir.path(), 2, "");
    let err = one_line(&slurm_run(&cluster, &m, &file.join("runs"), &[]));
    assert!(err.contains("--executor slurm: cannot write into"), "{err}");

    // No Slurm on the machine: no sbatch on PATH.
    let m = manifest(dir.path(), 2, "");
    let o = trainer(&cluster)
        .env("PATH", "/nonexistent")
        .args(["run", "--executor", "slurm", "--out"])
        .arg(dir.path().join("c"))
        .arg(&m)
        .output()
        .unwrap();
    let err = one_line(&o);
    assert!(err.contains("--executor slurm: no Slurm here"), "{err}");

    // Slurm's options are refused without the Slurm executor.
    let o = trainer(&cluster)
        .args(["run", "--detach"])
        .arg(&m)
        .output()
        .unwrap();
    assert!(one_line(&o).contains("--detach is for --executor slurm"));
}

fn whoami() -> String {
    let o = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}
