
void relu_inplace_cuda(torch::Tensor& x);
int64_t count_positive_cuda(const torch::Tensor& x);
