
std::tuple<torch::Tensor, torch::Tensor> softmax_cuda(torch::Tensor x);
torch::Tensor row_max_cuda(torch::Tensor x);
