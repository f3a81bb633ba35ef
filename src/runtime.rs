//! # What this program runs on
//!
//! The LibTorch that is loaded (which may not be the one the build found: a machine with its own PyTorch
//! can point `LD_LIBRARY_PATH` at that one), and, where there is a GPU, the CUDA runtime, cuDNN, the
//! NVIDIA driver and each device. Each is asked of the library itself (`src/runtime.cpp`): LibTorch's
//! build options and CUDA hooks, and the driver's libcuda and NVML. `anatomy doctor` prints it, and a
//! notebook's set-up cell names the version.
use std::ffi::{c_char, c_int, c_long, CStr, CString};

extern "C" {
    fn anatomy_build_option(key: *const c_char, out: *mut c_char, len: usize) -> bool;
    fn anatomy_libtorch_path(out: *mut c_char, len: usize) -> bool;
    fn anatomy_cuda_versions(runtime: *mut c_long, cudnn: *mut c_long) -> bool;
    fn anatomy_cuda_driver(release: *mut c_char, len: usize, cuda_version: *mut c_int, devices: *mut c_int) -> bool;
    fn anatomy_cuda_device(index: c_int, name: *mut c_char, len: usize, total_bytes: *mut usize) -> bool;
}

/// The LibTorch this process loaded, and the CUDA side where there is one.
#[derive(Debug, Clone, PartialEq)]
pub struct Runtime {
    /// LibTorch's own version, e.g. `2.13.0`.
    pub libtorch: String,
    /// The library file it was loaded from.
    pub library: Option<String>,
    /// The CUDA version LibTorch was built for (`13.0`), if any.
    pub built_for_cuda: Option<String>,
    /// LibTorch's CUDA part (libtorch_cuda) as loaded: the CUDA runtime and cuDNN versions.
    pub cuda: Option<CudaLibraries>,
    /// The NVIDIA driver and the devices it sees.
    pub driver: Option<Driver>,
}

/// The CUDA runtime and cuDNN that LibTorch's CUDA part loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct CudaLibraries {
    pub runtime: String,
    pub cudnn: Option<String>,
}

/// The NVIDIA driver: its release, the CUDA version it supports, and its devices.
#[derive(Debug, Clone, PartialEq)]
pub struct Driver {
    pub release: Option<String>,
    pub cuda: String,
    pub devices: Vec<Gpu>,
}

/// One GPU as the driver reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Gpu {
    pub index: i32,
    pub name: String,
    pub memory_bytes: u64,
}

impl Runtime {
    /// A GPU is there, but this LibTorch cannot use it (a CPU-only build, or one the driver is too old for).
    pub fn unused_gpu(&self) -> bool {
        self.driver.as_ref().is_some_and(|d| !d.devices.is_empty()) && !tch::Cuda::is_available()
    }
}

/// What `anatomy doctor` prints of it: one line each for LibTorch, its CUDA part, the driver and each GPU,
/// and whether LibTorch can use a GPU.
impl std::fmt::Display for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "LibTorch        {} loaded from {}",
            self.libtorch,
            self.library.as_deref().unwrap_or("(file unknown)")
        )?;
        match &self.cuda {
            Some(libs) => writeln!(
                f,
                "CUDA runtime    {}, cuDNN {}",
                libs.runtime,
                libs.cudnn.as_deref().unwrap_or("not loaded")
            )?,
            None => {
                let built = self.built_for_cuda.as_ref().map(|v| format!(" (built for CUDA {v})")).unwrap_or_default();
                writeln!(f, "CUDA runtime    none: this LibTorch{built} runs without its CUDA part (`make setup CUDA=1` on a GPU machine)")?
            }
        }
        match &self.driver {
            Some(driver) => {
                let release = driver.release.as_deref().unwrap_or("release unknown");
                writeln!(f, "NVIDIA driver   {release}, for CUDA up to {}", driver.cuda)?;
                for gpu in &driver.devices {
                    let gib = gpu.memory_bytes as f64 / (1u64 << 30) as f64;
                    writeln!(f, "GPU {:<11} {}, {gib:.1} GiB", gpu.index, gpu.name)?;
                }
            }
            None => writeln!(f, "NVIDIA driver   none found (no GPU here)")?,
        }
        if tch::Cuda::is_available() {
            let cudnn = if tch::Cuda::cudnn_is_available() { "available" } else { "not available" };
            writeln!(f, "CUDA            available to LibTorch: {} device(s), cuDNN {cudnn}", tch::Cuda::device_count())
        } else {
            writeln!(f, "CUDA            not available to LibTorch; `--device cpu` is used")
        }
    }
}

/// Reads a string a shim function wrote into a buffer; `None` when it said it had none.
fn read_text(write: impl FnOnce(*mut c_char, usize) -> bool) -> Option<String> {
    let mut buffer = vec![0 as c_char; 512];
    if !write(buffer.as_mut_ptr(), buffer.len()) {
        return None;
    }
    // SAFETY: the shim wrote a zero-terminated string into the buffer (copy_out always terminates it).
    let text = unsafe { CStr::from_ptr(buffer.as_ptr()) }.to_string_lossy().into_owned();
    (!text.is_empty()).then_some(text)
}

fn build_option(key: &str) -> Option<String> {
    let key = CString::new(key).expect("a key without a zero byte");
    // SAFETY: a zero-terminated key and a buffer of the length given.
    read_text(|out, len| unsafe { anatomy_build_option(key.as_ptr(), out, len) })
}

/// `12080` → `12.8` (CUDA's `1000 × major + 10 × minor`).
fn cuda_version(v: i64) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// `91002` → `9.10.2` (cuDNN 9's `10000 × major + 100 × minor + patch`; cuDNN 8 counted `1000 × major`).
fn cudnn_version(v: i64) -> String {
    if v >= 90000 {
        format!("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100)
    } else {
        format!("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100)
    }
}

/// The loaded LibTorch's version, e.g. `2.13.0`.
pub fn libtorch_version() -> String {
    build_option("TORCH_VERSION").unwrap_or_else(|| "unknown".into())
}

/// Asks the loaded libraries what they are.
pub fn runtime() -> Runtime {
    let libtorch = libtorch_version();
    // SAFETY: a buffer of the length given.
    let library = read_text(|out, len| unsafe { anatomy_libtorch_path(out, len) });
    let built_for_cuda = build_option("CUDA_VERSION");
    let (mut runtime, mut cudnn): (c_long, c_long) = (0, 0);
    // SAFETY: two out-parameters.
    let cuda = unsafe { anatomy_cuda_versions(&mut runtime, &mut cudnn) }
        .then(|| CudaLibraries { runtime: cuda_version(runtime), cudnn: (cudnn > 0).then(|| cudnn_version(cudnn)) });
    Runtime { libtorch, library, built_for_cuda, cuda, driver: driver() }
}

fn driver() -> Option<Driver> {
    let (mut version, mut count): (c_int, c_int) = (0, 0);
    let mut found = false;
    // SAFETY: a buffer of the length given and two out-parameters.
    let release = read_text(|out, len| {
        found = unsafe { anatomy_cuda_driver(out, len, &mut version, &mut count) };
        found
    });
    if !found {
        return None;
    }
    let devices = (0..count)
        .filter_map(|index| {
            let mut bytes = 0usize;
            // SAFETY: a buffer of the length given and an out-parameter.
            let name = read_text(|out, len| unsafe { anatomy_cuda_device(index, out, len, &mut bytes) })?;
            Some(Gpu { index, name, memory_bytes: bytes as u64 })
        })
        .collect();
    Some(Driver { release, cuda: cuda_version(version as i64), devices })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_nvidia_writes_them() {
        assert_eq!(cuda_version(13000), "13.0");
        assert_eq!(cuda_version(12080), "12.8");
        assert_eq!(cudnn_version(91002), "9.10.2");
        assert_eq!(cudnn_version(8902), "8.9.2");
    }
}
