# A base model written for Python <= 3.6: `async` is a keyword since 3.7, so this file does not
# parse (r21 imports its class; kept unreadable on purpose).
class BaseModel():
    def initialize(self, opt):
        self.opt = opt
        self.gpu_ids = opt.gpu_ids

    def set_input(self, input):
        input_A = input['A']
        input_B = input['B']
        if len(self.gpu_ids) > 0:
            input_A = input_A.cuda(self.gpu_ids[0], async=True)
            input_B = input_B.cuda(self.gpu_ids[0], async=True)
        self.input_A = input_A
        self.input_B = input_B
