//! Standard output as command-line tools treat it: when the reader goes away (`anatomy tour | head -2`,
//! `anatomy doctor | grep -q CUDA`), the command ends there, quietly, with exit code 0; any other failure to
//! write is one line and exit code 1. Rust's own `println!` panics on a closed pipe, so this module's
//! `println!` and `print!` replace it in every file of the command (they are declared before the
//! sub-commands' modules in main.rs), and main.rs ends quietly on an error that a closed pipe caused.
use std::io::{self, Write};

/// Writes to standard output, ending the process on failure as [`end_on`] says.
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!($($arg)*))
    };
}

/// [`print!`] with a line break.
macro_rules! println {
    () => {
        $crate::output::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub fn write_stdout(args: std::fmt::Arguments) {
    if let Err(e) = io::stdout().lock().write_fmt(args) {
        end_on(&e)
    }
}

/// Ends the process after a failed write to standard output: exit code 0 and nothing said when the reader
/// closed the pipe, else one line and exit code 1.
pub fn end_on(e: &io::Error) -> ! {
    if e.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(0)
    }
    let _ = writeln!(io::stderr(), "error: writing to standard output: {e}");
    std::process::exit(1)
}

/// Whether an error came from writing into a pipe whose reader has gone (a sub-command that writes through
/// a `Write` it was given returns it rather than ending the process).
pub fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| cause.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe))
}
