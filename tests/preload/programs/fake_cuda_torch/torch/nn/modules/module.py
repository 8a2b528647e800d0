class Module:
    def __call__(self, *args):
        return self.forward(*args)
