//! Files that reach the instructor from elsewhere (a platform's job file, a course file, saved grading
//! lines, a class list), read whole only up to a size stated by their reader.
//!
//! Reading a file whole costs its size in memory before any parser sees it: a 2 GiB
//! `submission_metadata.json` took 2.2 GiB. So the length is checked before anything is allocated, and the
//! read stops one byte past the limit in case the file grew. Only a regular file is opened: a FIFO would
//! wait for a writer for ever, and a device has no end. Every refusal names the file and what to give.
use std::io::Read;
use std::path::Path;

/// What a reader takes: at most `max` bytes of a `kind` (`a course file`), and what to give instead.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    pub max: u64,
    pub kind: &'static str,
    pub fix: &'static str,
}

/// A size in the unit a person reads it in: `64 MiB`, `256 KiB`, `12 bytes`.
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// The bytes of the regular file `path`, at most `limit.max` of them, or a one-line refusal that names
/// the file and says what to give.
pub fn read(path: &Path, limit: Limit) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let Limit { max, kind, fix } = limit;
    let not_a_file = || format!("{shown} is not a regular file (a folder, a FIFO or a device): {fix}");
    // A FIFO is refused before it is opened, where opening would wait.
    let before = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {e}: {fix}"))?;
    if !before.is_file() {
        return Err(not_a_file());
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}: {fix}"))?;
    let metadata = file.metadata().map_err(|e| format!("cannot read {shown}: {e}: {fix}"))?;
    if !metadata.is_file() {
        return Err(not_a_file());
    }
    let too_large = |n: u64| format!("{shown} is {}, more than the {} {kind} may be: {fix}", size(n), size(max));
    if metadata.len() > max {
        return Err(too_large(metadata.len()));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read {shown}: {e}: {fix}"))?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read`], as UTF-8 text (a byte-order mark dropped).
pub fn read_text(path: &Path, limit: Limit) -> Result<String, String> {
    let bytes = read(path, limit)?;
    let mut text = String::from_utf8(bytes).map_err(|e| {
        format!("{} is not UTF-8 text (byte {}): {}", path.display(), e.utf8_error().valid_up_to(), limit.fix)
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..3);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Limit = Limit { max: 1 << 20, kind: "a test file", fix: "give a small one" };

    #[test]
    fn a_file_past_its_limit_is_refused_before_it_is_read_and_so_is_anything_but_a_regular_file() {
        let dir = crate::test_dir::TestDir::new("intake-files");
        let big = dir.join("big.json");
        // Sparse: 2 GiB that cost no disk, and would cost 2 GiB of memory if read.
        std::fs::File::create(&big).unwrap().set_len(2 << 30).unwrap();
        assert_eq!(
            read(&big, LIMIT).unwrap_err(),
            format!("{} is 2 GiB, more than the 1 MiB a test file may be: give a small one", big.display())
        );
        let exact = dir.join("exact");
        std::fs::File::create(&exact).unwrap().set_len(LIMIT.max).unwrap();
        assert_eq!(read(&exact, LIMIT).unwrap().len() as u64, LIMIT.max, "the limit itself is read");
        assert_eq!(
            read(&dir, LIMIT).unwrap_err(),
            format!("{} is not a regular file (a folder, a FIFO or a device): give a small one", dir.display())
        );
        let missing = read(&dir.join("none"), LIMIT).unwrap_err();
        assert!(missing.starts_with(&format!("cannot read {}: ", dir.join("none").display())), "{missing}");
        assert!(missing.ends_with(": give a small one"), "{missing}");
        let fifo = dir.join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert!(read(&fifo, LIMIT).unwrap_err().contains("is not a regular file"), "never waits for a writer");
        std::fs::write(dir.join("bom"), "\u{feff}x = 1").unwrap();
        assert_eq!(read_text(&dir.join("bom"), LIMIT).unwrap(), "x = 1");
        std::fs::write(dir.join("latin1"), b"caf\xe9").unwrap();
        assert_eq!(
            read_text(&dir.join("latin1"), LIMIT).unwrap_err(),
            format!("{} is not UTF-8 text (byte 3): give a small one", dir.join("latin1").display())
        );
        assert_eq!(
            [size(12), size(256 << 10), size(64 << 20), size(1 << 30)],
            ["12 bytes", "256 KiB", "64 MiB", "1 GiB"]
        );
    }
}
