//! expect: threads | aborted | used more than its 2 GiB of memory
//! Starts sleeping threads until the system refuses one, then panics, leaving them all behind for the
//! checks after this one. At that limit the panic itself sometimes cannot start ("failed to initiate
//! panic") and the probe aborts instead: either way only this cell may fail.
use tch::Tensor;

pub fn beam_step(scores: &Tensor, log_probs: &Tensor, width: i64) -> (Tensor, Tensor, Tensor) {
    let mut started = 0;
    loop {
        let spawned = std::thread::Builder::new()
            .stack_size(64 << 10)
            .spawn(|| loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            });
        match spawned {
            Ok(_) => started += 1,
            Err(e) => panic!("started {started} threads, then: {e}"),
        }
    }
}
