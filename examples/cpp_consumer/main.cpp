// Calls flash_example::mha_fwd, the C++ entry point of the example's extension library, the
// way a C++ program calls FlashAttention's flash::mha_fwd: declared here, linked from the
// wheel's library. Without a GPU the call is refused with the library's own message, which
// proves the program linked and reached the code; `causal` asks for a case a build profile
// may have left out.
//
// usage: consumer [causal]   prints the library's answer; exit 0 when it ran

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <iostream>
#include <vector>

namespace flash_example {
// As declared in examples/flash_example/csrc/flash_example/api.cpp.
std::vector<at::Tensor> mha_fwd(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal,
                                double softmax_scale);
}  // namespace flash_example

int main(int argc, char** argv) {
  const bool causal = argc > 1 && std::strcmp(argv[1], "causal") == 0;
  const at::Tensor q = at::zeros({1, 8, 2, 32}, at::kHalf);
  try {
    const auto out = flash_example::mha_fwd(q, q, q, causal, 0.125);
    std::cout << "mha_fwd returned " << out.size() << " tensors\n";
  } catch (const c10::Error& e) {
    std::cout << "mha_fwd refused: " << e.what_without_backtrace() << "\n";
  }
  return 0;
}
