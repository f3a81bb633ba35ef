// LibTorch's fused AdamW kernel and the foreach operations around it, for Rust: tch 0.26 binds none of
// them (its generator skips operations that change a list of tensors in place), so these functions do,
// and src/training/fused_adamw.rs wraps them. The fallible ones return NULL, or an error message that the
// caller frees with anatomy_free_error. A `const at::Tensor *` is what tch calls a `C_tensor`.
#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/_foreach_norm.h>
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/stack.h>

#include <cstring>
#include <exception>
#include <vector>

namespace {

char *error_message(const std::exception &e) {
    return strdup(e.what());
}

// Which parameters have a gradient (a parameter no loss reached has none): only those take part.
std::vector<size_t> with_grads(const at::Tensor *const *params, size_t n) {
    std::vector<size_t> found;
    for (size_t i = 0; i < n; ++i) {
        if (params[i]->grad().defined()) {
            found.push_back(i);
        }
    }
    return found;
}

}  // namespace

extern "C" void anatomy_free_error(char *message) {
    free(message);
}

// One AdamW step on every parameter that has a gradient: its step count goes up by one, then the
// kernel updates the parameters and both moment estimates in place, in one pass over each.
extern "C" char *anatomy_fused_adamw_step(const at::Tensor *const *params,
                                          const at::Tensor *const *exp_avgs,
                                          const at::Tensor *const *exp_avg_sqs,
                                          const at::Tensor *const *steps, size_t n, double lr, double beta1,
                                          double beta2, double weight_decay, double eps) {
    try {
        at::NoGradGuard no_grad;
        std::vector<at::Tensor> p, g, m, v, s;
        for (size_t i : with_grads(params, n)) {
            p.push_back(*params[i]);
            g.push_back(params[i]->grad());
            m.push_back(*exp_avgs[i]);
            v.push_back(*exp_avg_sqs[i]);
            s.push_back(*steps[i]);
        }
        if (p.empty()) {
            return nullptr;
        }
        at::_foreach_add_(s, 1);
        at::_fused_adamw_(p, g, m, v, {}, s, lr, beta1, beta2, weight_decay, eps, false, false);
        return nullptr;
    } catch (const std::exception &e) {
        return error_message(e);
    }
}

// Scales all gradients together so that their joint L2 norm is at most `max_norm` (one norm per
// gradient, then the norm of those); when it already is, leaves them alone, as tch's clip_grad_norm does.
extern "C" char *anatomy_clip_grad_norm(const at::Tensor *const *params, size_t n, double max_norm) {
    try {
        at::NoGradGuard no_grad;
        std::vector<at::Tensor> grads;
        for (size_t i : with_grads(params, n)) {
            grads.push_back(params[i]->grad());
        }
        if (grads.empty()) {
            return nullptr;
        }
        double total = at::stack(at::_foreach_norm(grads, 2)).norm().item<double>();
        double scale = max_norm / (total + 1e-6);
        if (scale < 1.0) {
            at::_foreach_mul_(grads, scale);
        }
        return nullptr;
    } catch (const std::exception &e) {
        return error_message(e);
    }
}

// Forgets every gradient (rather than filling it with zeros): the next backward pass then writes its
// gradients into fresh tensors instead of adding them to zeros, one pass over memory fewer.
extern "C" void anatomy_clear_grads(const at::Tensor *const *params, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        params[i]->mutable_grad().reset();
    }
}
