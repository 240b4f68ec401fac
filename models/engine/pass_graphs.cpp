// PassGraphs on libtorch's CUDA graphs (ATen/cuda/CUDAGraph.h). All graphs share one memory pool:
// they are replayed one at a time on one stream, and each keeps its own inputs and logits alive.
#include "models/engine/pass_graphs.hpp"

#include "models/engine/qwen3_model.hpp"

#if DICEBENCH_ENGINE_CUDA_GRAPHS
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>

#include <map>
#include <tuple>
#endif

namespace dicebench::engine {

#if DICEBENCH_ENGINE_CUDA_GRAPHS
namespace {

struct GraphShape {
  int64_t rows, count, logits_count, keys;
  auto operator<=>(const GraphShape&) const = default;
};

struct CapturedPass {
  at::cuda::CUDAGraph graph;
  PassInputs inputs;  // the graph reads these tensors: refilled before each replay
  at::Tensor logits;  // and writes this one
};

class CudaPassGraphs final : public PassGraphs {
 public:
  explicit CudaPassGraphs(Qwen3Model& model) : model_(model), pool_(at::cuda::graph_pool_handle()) {}

  at::Tensor run(const at::Tensor& tokens, const at::Tensor& positions, const at::Tensor& mask, int64_t start,
                 int64_t logits_count) override {
    const int64_t rows = tokens.size(0), count = tokens.size(1), visible = start + count;
    const GraphShape shape{rows, count, logits_count, (visible + kKeyBucket - 1) / kKeyBucket * kKeyBucket};
    TORCH_CHECK(shape.keys <= model_.cache_columns(),
                "PassGraphs::run: the KV cache is too small (reserve_cache first)");
    auto found = graphs_.find(shape);
    const bool fresh = found == graphs_.end();
    if (fresh) found = graphs_.emplace(shape, make_inputs(shape)).first;
    auto& captured = *found->second;
    auto& inputs = captured.inputs;
    inputs.tokens.copy_(tokens);
    inputs.positions.copy_(positions);
    inputs.columns.copy_(at::arange(start, visible, inputs.columns.options()));
    model_.fill_attention_bias(*inputs.bias, mask, visible);
    if (fresh) capture(captured, logits_count);
    captured.graph.replay();
    return captured.logits;
  }

  void clear() override {
    graphs_.clear();
    // A pool whose graphs are all gone cannot take new captures while tensors of it live on
    // (the caller may still hold logits): the next captures go to a new one.
    pool_ = at::cuda::graph_pool_handle();
  }

 private:
  std::unique_ptr<CapturedPass> make_inputs(const GraphShape& shape) const {
    auto captured = std::make_unique<CapturedPass>();
    const auto on_device = at::TensorOptions().device(model_.device());
    const auto long_options = on_device.dtype(at::kLong);
    captured->inputs = PassInputs{
        at::zeros({shape.rows, shape.count}, long_options), at::zeros({shape.rows, shape.count}, long_options),
        at::zeros({shape.count}, long_options), shape.keys,
        at::empty({shape.rows, 1, model_.query_group() * shape.count, shape.keys}, on_device.dtype(model_.dtype()))};
    return captured;
  }

  // One eager pass on a side stream first (it sets up cuBLAS and attention workspaces, which
  // must not be allocated during capture; it computes what the replay computes, so its cache
  // writes are the same), then the capture.
  void capture(CapturedPass& captured, int64_t logits_count) {
    c10::cuda::device_synchronize();  // the inputs were filled on the current stream
    const auto side = c10::cuda::getStreamFromPool(false, model_.device().index());
    {
      c10::cuda::CUDAStreamGuard guard(side);
      model_.pass(captured.inputs, logits_count);
      c10::cuda::device_synchronize();
      captured.graph.capture_begin(pool_, cudaStreamCaptureModeThreadLocal);
      captured.logits = model_.pass(captured.inputs, logits_count);
      captured.graph.capture_end();
    }
    c10::cuda::device_synchronize();
  }

  Qwen3Model& model_;
  c10::MempoolId_t pool_;
  std::map<GraphShape, std::unique_ptr<CapturedPass>> graphs_;
};

}  // namespace

std::unique_ptr<PassGraphs> make_pass_graphs(Qwen3Model& model) { return std::make_unique<CudaPassGraphs>(model); }
#else
std::unique_ptr<PassGraphs> make_pass_graphs(Qwen3Model&) { return nullptr; }
#endif

}  // namespace dicebench::engine
