//! The computation graph: nodes that point at the nodes of their inputs, and the reverse pass over them.
//!
//! There is no global tape. A node is owned (through `Arc`) by the tensors computed from it and by the nodes of
//! later ops, so the graph of a loss is freed when the loss and its intermediate tensors are dropped.

use std::collections::HashMap;
use std::collections::HashSet;
use std::collections::hash_map::Entry;
use std::fmt;
use std::sync::Arc;

use crate::backend::Backend;
use crate::backends::BaseBackend;
use crate::error::Result;
use crate::gradients::TensorId;

/// The inner backend's tensor primitive.
pub(crate) type Inner<B> = <B as Backend>::FloatTensor;

/// The vector-Jacobian product of one op: from the gradient of its output, the gradient of each input, in input
/// order; `None` for an input that records no graph (the rule skips computing it).
pub(crate) type BackwardFn<B> = Box<dyn Fn(Inner<B>) -> Result<Vec<Option<Inner<B>>>> + Send + Sync>;

/// One tensor that records a graph.
pub(crate) struct Node<B: BaseBackend> {
    id: TensorId,
    origin: Origin<B>,
}

enum Origin<B: BaseBackend> {
    /// Marked with `require_grad`: `backward` reports its gradient.
    Leaf,
    /// The output of an op with at least one tracked input.
    Op {
        name: &'static str,
        /// One entry per input of the op; `None` for an input that records no graph.
        inputs: Vec<Option<Arc<Node<B>>>>,
        backward: BackwardFn<B>,
    },
}

impl<B: BaseBackend> Node<B> {
    pub(crate) fn leaf() -> Arc<Self> {
        Arc::new(Self { id: TensorId::new(), origin: Origin::Leaf })
    }

    pub(crate) fn op(name: &'static str, inputs: Vec<Option<Arc<Node<B>>>>, backward: BackwardFn<B>) -> Arc<Self> {
        Arc::new(Self { id: TensorId::new(), origin: Origin::Op { name, inputs, backward } })
    }

    pub(crate) fn id(&self) -> TensorId {
        self.id
    }

    pub(crate) fn is_leaf(&self) -> bool {
        matches!(self.origin, Origin::Leaf)
    }

    fn inputs(&self) -> &[Option<Arc<Node<B>>>] {
        match &self.origin {
            Origin::Leaf => &[],
            Origin::Op { inputs, .. } => inputs,
        }
    }
}

impl<B: BaseBackend> fmt::Debug for Node<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match &self.origin {
            Origin::Leaf => "leaf",
            Origin::Op { name, .. } => name,
        };
        f.debug_struct("Node").field("id", &self.id).field("op", &name).finish()
    }
}

/// Unlinks the inputs one node at a time: the default recursive drop would overflow the stack on a graph thousands
/// of ops deep (a long unrolled loop).
impl<B: BaseBackend> Drop for Node<B> {
    fn drop(&mut self) {
        let Origin::Op { inputs, .. } = &mut self.origin else { return };
        let mut orphans: Vec<Arc<Node<B>>> = std::mem::take(inputs).into_iter().flatten().collect();
        while let Some(node) = orphans.pop() {
            // Only the last owner takes the node apart; a node still used elsewhere stays whole.
            if let Some(mut node) = Arc::into_inner(node)
                && let Origin::Op { inputs, .. } = &mut node.origin
            {
                orphans.extend(std::mem::take(inputs).into_iter().flatten());
            }
        }
    }
}

/// Every node `root` depends on, each once, ordered so that a node comes before all of its inputs: when the reverse
/// pass reaches a node, every op that consumed it has already sent its gradient contribution.
fn reverse_topological_order<B: BaseBackend>(root: Arc<Node<B>>) -> Vec<Arc<Node<B>>> {
    let mut visited = HashSet::from([root.id]);
    let mut post_order = Vec::new();
    // Depth-first with an explicit stack (node, index of the next input to visit), so deep graphs cannot overflow.
    let mut stack = vec![(root, 0usize)];
    while let Some((node, next_input)) = stack.last_mut() {
        match node.inputs().get(*next_input) {
            Some(input) => {
                *next_input += 1;
                if let Some(input) = input
                    && visited.insert(input.id)
                {
                    let input = Arc::clone(input);
                    stack.push((input, 0));
                }
            }
            None => {
                if let Some((node, _)) = stack.pop() {
                    post_order.push(node);
                }
            }
        }
    }
    post_order.reverse();
    post_order
}

/// Runs the reverse pass from `root`, whose gradient is `seed`, and returns the gradient of every leaf it reaches.
///
/// Each node is visited exactly once; the gradients a node receives from its several consumers are summed before
/// it passes them on, and released as soon as it has. The pass holds each node until it has run the node's rule: a
/// node nothing else holds (no tensor, no op outside the pass) is then dropped with what its rule saved, while the
/// rest of the pass runs. Given a root a tensor still holds, every node stays reachable and nothing is dropped.
pub(crate) fn backward<B: BaseBackend>(root: Arc<Node<B>>, seed: Inner<B>) -> Result<Vec<(TensorId, Inner<B>)>> {
    let order = reverse_topological_order(root);
    let mut pending: HashMap<TensorId, Inner<B>> = HashMap::with_capacity(order.len());
    if let Some(root) = order.first() {
        pending.insert(root.id, seed);
    }
    let mut leaf_gradients = Vec::new();
    // By value: each node's handle is dropped at the end of its turn, after its consumers' (earlier in the order).
    for node in order {
        // A node none of whose consumers produced a gradient for it contributes nothing.
        let Some(gradient) = pending.remove(&node.id) else { continue };
        match &node.origin {
            Origin::Leaf => leaf_gradients.push((node.id, gradient)),
            Origin::Op { inputs, backward, .. } => {
                for (input, input_gradient) in inputs.iter().zip(backward(gradient)?) {
                    if let (Some(input), Some(input_gradient)) = (input, input_gradient) {
                        accumulate::<B>(&mut pending, input.id, input_gradient)?;
                    }
                }
            }
        }
    }
    Ok(leaf_gradients)
}

fn accumulate<B: BaseBackend>(
    pending: &mut HashMap<TensorId, Inner<B>>,
    id: TensorId,
    contribution: Inner<B>,
) -> Result<()> {
    match pending.entry(id) {
        // The sum so far is the pass's own: given up, its memory can take the new sum.
        Entry::Occupied(sum) => {
            let total = B::add_into(sum.remove(), &contribution)?;
            pending.insert(id, total);
        }
        Entry::Vacant(slot) => {
            slot.insert(contribution);
        }
    }
    Ok(())
}
