//! The graph of `Autodiff<B>` on every base backend: shared nodes visited once, the MLP against
//! backpropagation by hand, what records a graph and what cuts it, errors, memory and threads. Gradients of each op
//! against finite differences are in `autodiff_gradients.rs`.

use std::sync::Arc;

use dispatch_core::DType;
use dispatch_core::backends::Autodiff;
use dispatch_core::{Backend, BaseBackend, Error, HostOp, Result, Tensor};
use dispatch_nn::models::classifier::{Classifier, one_hot};
use dispatch_tests::{IdentityHostOp as Identity, WitnessHostOp as Witness, assert_close_f64, f64s};

type Ad<B> = Autodiff<B>;

/// 60 levels of `y = y + y`: each node is reached along 2^k paths, so a pass that visited nodes once per path would
/// never finish; visiting each once gives exactly 2^60.
fn shared_subgraphs_are_visited_once<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![1.0], [1], device)?.require_grad()?;
    let mut y = x.clone();
    for _ in 0..60 {
        y = y.add(&y)?;
    }
    let gradients = y.backward()?;
    assert_eq!(x.grad(&gradients).unwrap().to_vec()?, vec![2f32.powi(60)]);
    Ok(())
}

/// In F64, as every gradient check: the model's F32 parameters, inputs and targets cast up.
fn mlp_gradients_match_backpropagation_by_hand<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let model = Classifier::<Ad<B>>::new(6, 5, 3, 7, device)?;
    let [w1, b1, w2, b2] = model.parameters().map(|parameter| parameter.cast(DType::F64));
    let model = Classifier { w1: w1?, b1: b1?, w2: w2?, b2: b2? };
    let x = Tensor::random_normal([4, 6], (0.0, 1.0), 11, DType::F64, device)?;
    let targets = one_hot(&[0, 2, 1, 2], 3, device)?.cast(DType::F64)?;
    let by_autodiff = model.gradients_by_autodiff(&x, &targets)?;
    let by_hand = model.gradients_by_hand(&x, &targets)?;
    assert_close_f64(&[by_autodiff.loss], &[by_hand.loss], 1e-6);
    for (autodiff, hand) in by_autodiff.tensors().into_iter().zip(by_hand.tensors()) {
        assert_eq!((autodiff.dims(), autodiff.dtype()), (hand.dims(), DType::F64));
        // Same math, different order of f64 operations: a few ulps apart.
        assert_close_f64(&autodiff.to_f64_vec()?, &hand.to_f64_vec()?, 1e-6);
    }
    // The biases start at zero, so a dead bias gradient would pass a loose check: make sure they are not zero.
    assert!(by_hand.b2.to_f64_vec()?.iter().any(|&g| g.abs() > 1e-3));
    Ok(())
}

fn backward_of_a_loss_with_several_elements_is_an_error<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![1.0, 2.0, 3.0, 4.0], [2, 2], device)?.require_grad()?;
    let error = x.exp()?.backward().unwrap_err();
    assert!(
        matches!(&error, Error::UnexpectedShape { op: "backward", shape, .. } if shape.dims() == [2, 2]),
        "{error}"
    );
    assert_eq!(error.to_string(), "invalid argument to `backward`: needs a one-element loss, got shape [2, 2]");
    Ok(())
}

fn tensors_that_do_not_require_grad_record_no_graph<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![1.0, 2.0], [2], device)?;
    let y = x.exp()?.mul(&x)?.sum()?;
    assert_eq!((x.id(), y.id()), (None, None));
    assert!(y.backward()?.is_empty());
    for created in [
        Tensor::<Ad<B>>::zeros([2], DType::F32, device)?,
        Tensor::random_uniform([2], (0.0, 1.0), 1, DType::F32, device)?,
    ] {
        assert_eq!(created.id(), None);
    }
    Ok(())
}

fn step_functions_and_indices_cut_the_graph<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![1.0, -2.0, 3.0, 0.5], [2, 2], device)?.require_grad()?;
    let step = x.gt_scalar(0.0)?.float(DType::F32)?;
    assert_eq!(step.id(), None);
    // A mask built from `x` is a constant: only the direct factor contributes.
    let gradients = x.mul(&step)?.sum()?.backward()?;
    assert_eq!(x.grad(&gradients).unwrap().to_vec()?, vec![1.0, 0.0, 1.0, 1.0]);
    Ok(())
}

fn gradients_are_detached_and_leaves_the_loss_ignores_get_none<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![1.0, 2.0], [2], device)?.require_grad()?;
    let unused = Tensor::<Ad<B>>::from_vec(vec![3.0], [1], device)?.require_grad()?;
    let gradients = x.exp()?.sum()?.backward()?;
    assert_eq!(x.grad(&gradients).unwrap().id(), None);
    assert!(unused.grad(&gradients).is_none());
    Ok(())
}

fn require_grad_keeps_a_leaf_and_cuts_below_an_op_output<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![1.0, 2.0], [2], device)?.require_grad()?;
    assert_eq!(x.require_grad()?.id(), x.id());
    let cut = x.mul_scalar(3.0)?.require_grad()?;
    assert_ne!(cut.id(), x.id());
    let gradients = cut.mul_scalar(2.0)?.sum()?.backward()?;
    assert_eq!(cut.grad(&gradients).unwrap().to_vec()?, vec![2.0, 2.0]);
    assert!(x.grad(&gradients).is_none(), "the gradient stops at the new leaf");
    let detached = x.mul_scalar(2.0)?.detach()?;
    assert_eq!((detached.id(), detached.to_vec()?), (None, vec![2.0, 4.0]));
    Ok(())
}

fn backward_can_run_twice_on_the_same_loss<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![0.5, 1.5], [2], device)?.require_grad()?;
    let loss = x.tanh()?.mul(&x)?.sum()?;
    let first = x.grad(&loss.backward()?).unwrap().to_vec()?;
    let second = x.grad(&loss.backward()?).unwrap().to_vec()?;
    assert_eq!(first, second);
    Ok(())
}

fn the_graph_is_freed_with_the_loss<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![1.0, 2.0], [2], device)?.require_grad()?;
    let op = Arc::new(Identity);
    let watch = Arc::downgrade(&op);
    let loss = x.host_op(op)?.exp()?.sum()?;
    assert!(watch.upgrade().is_some(), "the graph keeps what its backward needs");
    loss.backward()?;
    assert!(watch.upgrade().is_some(), "backward leaves the graph usable");
    drop(loss);
    assert!(watch.upgrade().is_none(), "dropping the loss frees its graph, while the leaf lives on");
    assert!(x.id().is_some());
    Ok(())
}

/// `loss = sum(exp(identity(witness(x))))`: the pass reaches the identity's node before the witness's.
struct Witnessed<B: BaseBackend> {
    x: Tensor<Ad<B>>,
    loss: Tensor<Ad<B>>,
    witness: Arc<Witness>,
}

impl<B: BaseBackend> Witnessed<B> {
    fn on(device: &B::Device) -> Result<Self> {
        let x = Tensor::<Ad<B>>::from_vec(vec![0.5, -1.0], [2], device)?.require_grad()?;
        let identity = Arc::new(Identity);
        let witness = Arc::new(Witness::of(&identity));
        let loss = x.host_op(Arc::clone(&witness) as Arc<dyn HostOp>)?.host_op(identity)?.exp()?.sum()?;
        Ok(Self { x, loss, witness })
    }
}

fn backward_once_frees_each_node_once_its_rule_has_run<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let Witnessed { x, loss, witness } = Witnessed::<B>::on(device)?;
    let kept = x.grad(&loss.backward()?).unwrap().to_vec()?;
    assert_eq!(witness.saw_it_freed(), Some(false), "`backward` keeps the graph for another pass");
    let freed = x.grad(&loss.backward_once()?).unwrap().to_vec()?;
    assert_eq!(witness.saw_it_freed(), Some(true), "a consumer's node is freed before its input's rule");
    assert_eq!(freed, kept);
    assert_eq!(Arc::strong_count(&witness), 1, "nothing of the graph is left after the pass");
    Ok(())
}

fn backward_once_keeps_what_another_tensor_still_reaches<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let Witnessed { x, loss, witness } = Witnessed::<B>::on(device)?;
    let other = loss.clone();
    let first = x.grad(&loss.backward_once()?).unwrap().to_vec()?;
    assert_eq!(witness.saw_it_freed(), Some(false));
    assert_eq!(x.grad(&other.backward()?).unwrap().to_vec()?, first, "the clone's graph is whole");
    Ok(())
}

/// A graph far deeper than the stack allows recursion for: backward and drop both walk it iteratively.
fn a_very_deep_graph_runs_backward_and_drops_without_overflowing<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![0.0], [1], device)?.require_grad()?;
    let mut y = x.clone();
    for _ in 0..50_000 {
        y = y.add_scalar(1.0)?;
    }
    let gradients = y.backward()?;
    assert_eq!(y.to_vec()?, vec![50_000.0]);
    assert_eq!(x.grad(&gradients).unwrap().to_vec()?, vec![1.0]);
    let kept = y.clone();
    assert_eq!(x.grad(&y.backward_once()?).unwrap().to_vec()?, vec![1.0]);
    drop(kept);
    let mut y = x.clone();
    for _ in 0..50_000 {
        y = y.add_scalar(1.0)?;
    }
    assert_eq!(x.grad(&y.backward_once()?).unwrap().to_vec()?, vec![1.0], "nor does a pass that frees it");
    Ok(())
}

/// Tracked tensors cross threads: a leaf shared by several threads, each building and differentiating its own
/// graph, and a loss built on one thread and differentiated on another.
fn graphs_are_built_and_differentiated_across_threads<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let w = f64s::<Ad<B>>(&[1.0, -2.0, 0.5], &[3], device)?.require_grad()?;
    std::thread::scope(|scope| -> Result<()> {
        let workers: Vec<_> = (1..=4)
            .map(|worker| {
                let w = &w;
                scope.spawn(move || -> Result<Vec<f64>> {
                    let gradients = w.mul_scalar(worker as f64)?.sum()?.backward()?;
                    w.grad(&gradients).unwrap().to_f64_vec()
                })
            })
            .collect();
        for (worker, handle) in (1..=4).zip(workers) {
            assert_eq!(handle.join().unwrap()?, vec![worker as f64; 3]);
        }
        Ok(())
    })?;
    let loss = std::thread::scope(|scope| scope.spawn(|| w.exp()?.sum()).join().unwrap())?;
    let gradients = std::thread::spawn(move || loss.backward()).join().unwrap()?;
    assert_close_f64(&w.grad(&gradients).unwrap().to_f64_vec()?, &w.exp()?.to_f64_vec()?, 1e-6);
    Ok(())
}

fn the_name_wraps_the_base_backends_name<B: BaseBackend>(device: &B::Device) -> Result<()> {
    assert_eq!(Ad::<B>::name(), format!("autodiff<{}>", B::name()));
    assert_eq!(
        Tensor::<Ad<B>>::zeros([1], DType::F32, device)?.device(),
        *device,
        "Autodiff runs on the base backend's devices"
    );
    Ok(())
}

// ---- every check on every base backend -----------------------------------------------------------------------

dispatch_tests::tests_on_every_base_backend!(
    shared_subgraphs_are_visited_once,
    mlp_gradients_match_backpropagation_by_hand,
    backward_of_a_loss_with_several_elements_is_an_error,
    tensors_that_do_not_require_grad_record_no_graph,
    step_functions_and_indices_cut_the_graph,
    gradients_are_detached_and_leaves_the_loss_ignores_get_none,
    require_grad_keeps_a_leaf_and_cuts_below_an_op_output,
    backward_can_run_twice_on_the_same_loss,
    the_graph_is_freed_with_the_loss,
    backward_once_frees_each_node_once_its_rule_has_run,
    backward_once_keeps_what_another_tensor_still_reaches,
    a_very_deep_graph_runs_backward_and_drops_without_overflowing,
    graphs_are_built_and_differentiated_across_threads,
    the_name_wraps_the_base_backends_name,
);
