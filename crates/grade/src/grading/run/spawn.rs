//! Starting a unit's probe: its channels, each a pipe of its own, and the command in the unit's sandbox.
//!
//! The probe's parent gets its control channel (it writes), the checks' seeds and its set-up (it reads);
//! each check `k` still to run gets a tape and an output pipe of its own, at descriptors the parent hands
//! to that check's process alone (`anatomy_checks::probe`). The grader keeps the other ends: it reads a
//! check's tape and output as that check's, and no other's, whatever is written on them.
use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::{bail, Context, Result};

use super::super::Setup;
use crate::sandbox::{self, ChildSetup, Tier};
use anatomy_checks::probe;
use anatomy_course::wire::{self, CPU_SECONDS, FILTER, PRIVATE_TMP};

/// A running probe and the grader's ends of its channels.
pub(super) struct Probe {
    pub child: Child,
    /// The parent's control channel (START, EXIT).
    pub control: File,
    /// Per check, from the first this probe runs: its tape and its output, to be read once it starts.
    pub checks: Vec<Option<(File, File)>>,
}

/// A pipe, both ends closed on exec: (read, write).
fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        bail!("cannot create a pipe: {}", std::io::Error::last_os_error());
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Starts the probe in `folder` for the checks `from..` (their seeds `seeds[from..]`), in the unit's sandbox.
pub(super) fn start(cx: &Setup, folder: &Path, from: usize, seeds: &[i64]) -> Result<Probe> {
    let probe_path = folder.join("probe");
    let mut command = match cx.tier {
        Tier::Bubblewrap(bwrap) => {
            let runtime = cx.recipe.runtime_dirs();
            sandbox::run_command(bwrap, folder, &runtime, &cx.recipe.libtorch_lib, &probe_path, cx.limits.disk)
        }
        Tier::Landlock(_) => sandbox::landlock::run_command(folder, &cx.recipe.runtime_dirs(), &probe_path)?,
        Tier::None => {
            let mut c = Command::new(&probe_path);
            c.current_dir(folder);
            c
        }
    };
    command.args(["--from", &from.to_string()]);
    // Nothing of the grader's environment: the sandbox clears it too (--clearenv) and sets its own.
    command.env_clear().env("OMP_NUM_THREADS", "1").env("LD_LIBRARY_PATH", &cx.recipe.libtorch_lib);

    let (control_read, control_write) = pipe()?;
    let (seeds_read, seeds_write) = pipe()?;
    let (setup_read, setup_write) = pipe()?;
    let mut dup_to = vec![
        (control_write.as_raw_fd(), probe::CONTROL),
        (seeds_read.as_raw_fd(), probe::SEEDS),
        (setup_read.as_raw_fd(), probe::SETUP),
    ];
    let mut theirs = vec![control_write, seeds_read, setup_read];
    let mut checks = Vec::new();
    for k in from..seeds.len() {
        let (tape_read, tape_write) = pipe()?;
        let (output_read, output_write) = pipe()?;
        dup_to.push((tape_write.as_raw_fd(), probe::tape_fd(k)));
        dup_to.push((output_write.as_raw_fd(), probe::output_fd(k)));
        theirs.extend([tape_write, output_write]);
        checks.push(Some((File::from(tape_read), File::from(output_read))));
    }
    // The seeds and the set-up fit in the pipes' buffers: written now, closed, read by the parent later.
    let mut seeds_file = File::from(seeds_write);
    for seed in &seeds[from..] {
        seeds_file.write_all(&seed.to_le_bytes())?;
    }
    drop(seeds_file);
    let mut setup_file = File::from(setup_write);
    for program in cx.programs {
        setup_file.write_all(&wire::frame(FILTER, program))?;
    }
    if matches!(cx.tier, Tier::Bubblewrap(_)) {
        setup_file.write_all(&wire::frame(PRIVATE_TMP, &[]))?;
    }
    let cpu_seconds = cx.limits.time_per_check.as_secs() + 10;
    setup_file.write_all(&wire::frame(CPU_SECONDS, &cpu_seconds.to_le_bytes()))?;
    drop(setup_file);

    let remaining = (seeds.len() - from) as u64;
    ChildSetup {
        memory: cx.limits.address_space(),
        cpu_seconds: cpu_seconds * remaining + 10,
        file_size: 64 << 20,
        open_at: Vec::<(CString, i32)>::new(),
        dup_to,
    }
    .apply(&mut command);
    command.process_group(0).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = command.spawn().with_context(|| format!("cannot start {}", probe_path.display()))?;
    // The grader keeps only its own ends: a channel ends when the probe's side of it is closed.
    drop(theirs);
    Ok(Probe { child, control: File::from(control_read), checks })
}
