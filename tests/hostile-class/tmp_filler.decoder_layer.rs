//! expect: wrote more than 256 MiB
//! expect-landlock: Permission denied
//! Fills memory through the file system: /dev/shm and /dev first (tmpfs, which no address-space limit
//! counts), then /tmp, 16 MiB a file, until the system says no.
use tch::Tensor;

pub use transformer_anatomy::exercises::support::DecoderLayerParts;

pub fn decoder_layer(
    x: &Tensor,
    memory: &Tensor,
    parts: &DecoderLayerParts,
    target_mask: &Tensor,
    source_mask: Option<&Tensor>,
) -> Tensor {
    let block = vec![7u8; 16 << 20];
    for place in ["/dev/shm", "/dev"] {
        let _ = std::fs::write(format!("{place}/filler"), &block);
    }
    for n in 0.. {
        std::fs::write(format!("/tmp/filler-{n}"), &block).unwrap();
    }
    unreachable!()
}
