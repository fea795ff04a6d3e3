//! What a call function returns: one result per call of its op, by kind of output.

use dispatch_core::{Backend, Result};

pub type Floats<B> = Vec<Result<<B as Backend>::FloatTensor>>;
pub type Ints<B> = Vec<Result<<B as Backend>::IntTensor>>;
pub type Bools<B> = Vec<Result<<B as Backend>::BoolTensor>>;
