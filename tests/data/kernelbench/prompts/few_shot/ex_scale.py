class Model:
    def forward(self, x):
        return x * 2
