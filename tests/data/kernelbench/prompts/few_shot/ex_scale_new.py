class ModelNew:
    def forward(self, x):
        return scale_kernel(x, {"factor": 2})
