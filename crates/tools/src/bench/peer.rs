//! The PyTorch side of a comparison: `scripts/bench_pytorch.py --serve --device D`, a process that times
//! one case per request line (one JSON object in, one out) on the same LibTorch, device and threads as ours.
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use tch::Device;

/// The PyTorch side: a process that times one case per request line.
pub struct PyTorch {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

#[derive(Deserialize)]
struct Reply {
    median_s: Option<f64>,
    host_s: Option<f64>,
    /// A decoding job's pairs: the cached run's seconds and the recomputing run's, pair by pair.
    cached_s: Option<Vec<f64>>,
    recompute_s: Option<Vec<f64>>,
    error: Option<String>,
}

impl PyTorch {
    /// Starts the PyTorch side on `device`, which is where it builds its modules and inputs and times them.
    pub fn start(python: &Path, device: Device) -> Result<Self> {
        let script = transformer_anatomy::project::project_root().join("scripts/bench_pytorch.py");
        let script = script.display().to_string();
        let device = match device {
            Device::Cuda(i) => format!("cuda:{i}"),
            Device::Cpu => "cpu".to_string(),
            other => bail!("the PyTorch side runs on the CPU or CUDA, not {other:?}"),
        };
        let mut child = Command::new(python)
            .args([script.as_str(), "--serve", "--device", &device])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {} {script}", python.display()))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        Ok(PyTorch { child, stdin, stdout })
    }

    fn ask(&mut self, name: &str, request: serde_json::Value) -> Result<Reply> {
        writeln!(self.stdin, "{request}").context("the PyTorch benchmark process has stopped")?;
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        let reply: Reply =
            serde_json::from_str(&line).with_context(|| format!("the PyTorch side answered {line:?}"))?;
        match reply.error {
            Some(e) => bail!("the PyTorch side failed on {name}: {e}"),
            None => Ok(reply),
        }
    }

    /// The medians of `repeats` runs of a case: (until its work was done, until the call returned).
    pub fn time(&mut self, name: &str, batch: i64, seq: i64, repeats: usize) -> Result<(f64, Option<f64>)> {
        let request = serde_json::json!({"name": name, "batch": batch, "seq": seq, "repeats": repeats});
        let reply = self.ask(name, request)?;
        let total = reply.median_s.with_context(|| format!("the PyTorch side sent no time for {name}"))?;
        Ok((total, reply.host_s))
    }

    /// `pairs` runs of a decoding job of `steps` steps with the cache, each followed by one without:
    /// (cached seconds, recomputing seconds) pair by pair.
    pub fn pairs(&mut self, name: &str, steps: i64, pairs: usize) -> Result<Vec<(f64, f64)>> {
        let reply = self.ask(name, serde_json::json!({"name": name, "seq": steps, "pairs": pairs}))?;
        match (reply.cached_s, reply.recompute_s) {
            (Some(c), Some(r)) if c.len() == pairs && r.len() == pairs => Ok(c.into_iter().zip(r).collect()),
            _ => bail!("the PyTorch side sent no {pairs} pairs of times for {name}"),
        }
    }
}

impl Drop for PyTorch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
