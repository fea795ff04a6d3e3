//! `AutodiffTensor`: the inner backend's tensor, plus the graph node it was computed by, if any.

use std::fmt;
use std::sync::Arc;

use super::graph::{BackwardFn, Inner, Node};
use crate::backends::BaseBackend;
use crate::error::{Error, Result};
use crate::gradients::TensorId;

/// The float tensor primitive of [`super::Autodiff`]: `B`'s own tensor, and the graph node that computed it when it
/// depends on a tensor marked with `require_grad`. Cloning is cheap (two reference counts).
pub struct AutodiffTensor<B: BaseBackend> {
    primitive: Inner<B>,
    node: Option<Arc<Node<B>>>,
}

impl<B: BaseBackend> AutodiffTensor<B> {
    /// A tensor that records no graph: a constant as far as gradients go.
    pub fn detached(primitive: Inner<B>) -> Self {
        Self { primitive, node: None }
    }

    /// `B`'s tensor, with the same values.
    pub fn primitive(&self) -> &Inner<B> {
        &self.primitive
    }

    /// `B`'s tensor, with the same values; the graph node, if any, is dropped.
    pub fn into_primitive(self) -> Inner<B> {
        self.primitive
    }

    /// Whether this tensor records a graph (it is, or depends on, a tensor marked with `require_grad`).
    pub fn is_tracked(&self) -> bool {
        self.node.is_some()
    }

    /// The identity `backward` reports this tensor's gradient under, if it records a graph.
    pub fn id(&self) -> Option<TensorId> {
        self.node.as_ref().map(|node| node.id())
    }

    /// This tensor as a leaf whose gradient `backward` reports. A leaf stays the same leaf; the output of an op
    /// becomes a new leaf, cut from the graph that computed it.
    pub(crate) fn to_leaf(&self) -> Self {
        match &self.node {
            Some(node) if node.is_leaf() => self.clone(),
            _ => Self { primitive: self.primitive.clone(), node: Some(Node::leaf()) },
        }
    }

    pub(crate) fn node(&self) -> Option<&Arc<Node<B>>> {
        self.node.as_ref()
    }

    /// `B`'s tensor and the graph node, taken apart.
    pub(crate) fn into_parts(self) -> (Inner<B>, Option<Arc<Node<B>>>) {
        (self.primitive, self.node)
    }

    /// The output of a one-input op. It records a graph only when the input does; only then is `rule` asked for
    /// the backward function (given the output, which some rules keep), so an untracked op saves nothing.
    pub(crate) fn unary<F>(
        name: &'static str,
        input: &Self,
        output: Inner<B>,
        rule: impl FnOnce(&Inner<B>) -> F,
    ) -> Self
    where
        F: Fn(Inner<B>) -> Result<Inner<B>> + Send + Sync + 'static,
    {
        Self::unary_of(name, input.node.clone(), output, rule)
    }

    /// `unary`, for an op that was given its input's tensor (`add_scalar_into`): `input_node` is the node it had.
    pub(crate) fn unary_of<F>(
        name: &'static str,
        input_node: Option<Arc<Node<B>>>,
        output: Inner<B>,
        rule: impl FnOnce(&Inner<B>) -> F,
    ) -> Self
    where
        F: Fn(Inner<B>) -> Result<Inner<B>> + Send + Sync + 'static,
    {
        let Some(input_node) = input_node else { return Self::detached(output) };
        let backward = rule(&output);
        Self::from_op(
            name,
            output,
            vec![Some(input_node)],
            Box::new(move |gradient| Ok(vec![Some(backward(gradient)?)])),
        )
    }

    /// The output of a two-input op. `rule` learns which inputs are tracked, so it keeps only what their gradients
    /// need, and its backward function returns `None` for the others.
    pub(crate) fn binary<F>(
        name: &'static str,
        [lhs, rhs]: [&Self; 2],
        output: Inner<B>,
        rule: impl FnOnce([bool; 2], &Inner<B>) -> F,
    ) -> Self
    where
        F: Fn(Inner<B>) -> Result<[Option<Inner<B>>; 2]> + Send + Sync + 'static,
    {
        Self::binary_of(name, [lhs.node.clone(), rhs.node.clone()], output, rule)
    }

    /// `binary`, for an op that was given its left input's tensor (`add_into`): `nodes` are the inputs' nodes.
    pub(crate) fn binary_of<F>(
        name: &'static str,
        nodes: [Option<Arc<Node<B>>>; 2],
        output: Inner<B>,
        rule: impl FnOnce([bool; 2], &Inner<B>) -> F,
    ) -> Self
    where
        F: Fn(Inner<B>) -> Result<[Option<Inner<B>>; 2]> + Send + Sync + 'static,
    {
        let tracked = [nodes[0].is_some(), nodes[1].is_some()];
        if tracked == [false, false] {
            return Self::detached(output);
        }
        let backward = rule(tracked, &output);
        Self::from_op(name, output, Vec::from(nodes), Box::new(move |gradient| Ok(Vec::from(backward(gradient)?))))
    }

    /// The output of an op over any number of inputs (`cat`), tracked when any input is.
    pub(crate) fn many<F>(
        name: &'static str,
        inputs: &[Self],
        output: Inner<B>,
        rule: impl FnOnce(Vec<bool>) -> F,
    ) -> Self
    where
        F: Fn(Inner<B>) -> Result<Vec<Option<Inner<B>>>> + Send + Sync + 'static,
    {
        if inputs.iter().all(|input| input.node.is_none()) {
            return Self::detached(output);
        }
        let backward = rule(inputs.iter().map(Self::is_tracked).collect());
        let nodes = inputs.iter().map(|input| input.node.clone()).collect();
        Self::from_op(name, output, nodes, Box::new(backward))
    }

    /// The output of an op written outside dispatch-core (an extension's kernel) with its backward rule: `output`
    /// is `B`'s result of the op on `inputs`' primitives, and `backward` maps the gradient of the output to the
    /// gradient of each input, in input order (`None` for an input the op is not differentiable in). The output
    /// records a graph when any input does; `backward` runs only then.
    ///
    /// A gradient of another shape or dtype than its input is the rule's bug, reported by `backward()` as an
    /// [`Error::ShapeMismatch`](crate::error::Error::ShapeMismatch) (the input's shape, then the gradient's) or an
    /// [`Error::DTypeMismatch`](crate::error::Error::DTypeMismatch) naming the op, not broadcast into the input.
    ///
    /// ```
    /// # use dispatch_core::backends::{Autodiff, AutodiffTensor, NdArray, NdArrayDevice};
    /// # use dispatch_core::{AutodiffBackend, Backend, Result};
    /// /// `x * y` with its product rule, as an extension's `Autodiff` impl records it.
    /// fn product(x: &AutodiffTensor<NdArray>, y: &AutodiffTensor<NdArray>) -> Result<AutodiffTensor<NdArray>> {
    ///     let output = NdArray::mul(x.primitive(), y.primitive())?;
    ///     let (x_values, y_values) = (x.primitive().clone(), y.primitive().clone());
    ///     Ok(AutodiffTensor::custom_op("product", [x, y], output, move |gradient| {
    ///         Ok([Some(NdArray::mul(&gradient, &y_values)?), Some(NdArray::mul(&gradient, &x_values)?)])
    ///     }))
    /// }
    /// # let device = NdArrayDevice;
    /// # let x = Autodiff::<NdArray>::require_grad(&Autodiff::<NdArray>::from_vec(vec![3.0], [1].into(), &device)?)?;
    /// # let y = Autodiff::<NdArray>::from_vec(vec![4.0], [1].into(), &device)?;
    /// # let gradients = Autodiff::<NdArray>::backward(&product(&x, &y)?)?;
    /// # let id = Autodiff::<NdArray>::tensor_id(&x).unwrap();
    /// # assert_eq!(Autodiff::<NdArray>::to_vec(gradients.get(id).unwrap())?, [4.0]);
    /// # Ok::<(), dispatch_core::Error>(())
    /// ```
    pub fn custom_op<const N: usize>(
        name: &'static str,
        inputs: [&Self; N],
        output: Inner<B>,
        backward: impl Fn(Inner<B>) -> Result<[Option<Inner<B>>; N]> + Send + Sync + 'static,
    ) -> Self {
        if inputs.iter().all(|input| input.node.is_none()) {
            return Self::detached(output);
        }
        let expected: Vec<_> =
            inputs.iter().map(|input| (B::shape(&input.primitive), B::dtype(&input.primitive))).collect();
        let nodes = inputs.iter().map(|input| input.node.clone()).collect();
        let checked = move |gradient| -> Result<Vec<Option<Inner<B>>>> {
            let gradients = backward(gradient)?;
            for (gradient, (shape, dtype)) in gradients.iter().zip(&expected) {
                let Some(gradient) = gradient else { continue };
                let (got_shape, got_dtype) = (B::shape(gradient), B::dtype(gradient));
                if got_shape != *shape {
                    return Err(Error::shape_mismatch(name, shape, &got_shape));
                }
                if got_dtype != *dtype {
                    return Err(Error::DTypeMismatch { op: name, lhs: *dtype, rhs: got_dtype });
                }
            }
            Ok(Vec::from(gradients))
        };
        Self::from_op(name, output, nodes, Box::new(checked))
    }

    fn from_op(
        name: &'static str,
        output: Inner<B>,
        inputs: Vec<Option<Arc<Node<B>>>>,
        backward: BackwardFn<B>,
    ) -> Self {
        Self { primitive: output, node: Some(Node::op(name, inputs, backward)) }
    }
}

impl<B: BaseBackend> Clone for AutodiffTensor<B> {
    fn clone(&self) -> Self {
        Self { primitive: self.primitive.clone(), node: self.node.clone() }
    }
}

impl<B: BaseBackend> fmt::Debug for AutodiffTensor<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AutodiffTensor")
            .field("backend", &B::name())
            .field("primitive", &self.primitive)
            .field("node", &self.node)
            .finish()
    }
}

/// Shorthand for the ops: the gradient of an input only when `tracked`, so untracked inputs cost nothing.
pub(crate) fn gradient_if<T>(tracked: bool, compute: impl FnOnce() -> Result<T>) -> Result<Option<T>> {
    if tracked { compute().map(Some) } else { Ok(None) }
}
