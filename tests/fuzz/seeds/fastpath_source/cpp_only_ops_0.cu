
#include <torch/extension.h>
#include <vector>

torch::Tensor fused_ops(torch::Tensor x, torch::Tensor w, double scale, int64_t dim) {
    auto h = torch::matmul(x, w.transpose(0, 1).contiguous());
    h = torch::relu(h) * scale + 1.0;
    auto s = torch::softmax(h, dim);
    auto parts = std::vector<torch::Tensor>{s, h.sum({1}, /*keepdim=*/true)};
    auto joined = torch::cat(parts, 1);
    auto z = torch::zeros({joined.size(0), 2}, joined.options());
    z.fill_(0.25);
    return torch::cat({joined, z}, 1).view({-1}).reshape({joined.size(0), -1}).clone();
}

std::vector<torch::Tensor> stats(std::vector<torch::Tensor> xs, bool keepdim) {
    std::vector<torch::Tensor> out;
    for (const auto& x : xs) {
        auto m = x.mean({0}, keepdim);
        auto mx = std::get<0>(x.max(0, keepdim));
        out.push_back(m);
        out.push_back(mx);
        out.push_back(torch::full({1}, (double)x.numel(), x.options()));
    }
    return out;
}
