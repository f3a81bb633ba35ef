// What a tensor is, where tch cannot say: whether it is a nested tensor (a list of tensors of different
// shapes in one, whose sizes LibTorch will not give as one shape). src/inspect.rs wraps it; the grader's
// canonical reader (crates/checks/src/tape.rs) asks it before it reads a returned tensor's sizes.
#include <ATen/core/Tensor.h>

// `tensor` is what tch's Tensor::as_ptr gives: a pointer to the at::Tensor it holds.
extern "C" bool anatomy_is_nested(const at::Tensor *tensor) {
    return tensor != nullptr && tensor->defined() && tensor->is_nested();
}
