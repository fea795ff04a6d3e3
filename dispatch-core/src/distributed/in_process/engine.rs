//! One rank's side of the in-process engine: it meets the group's other ranks for each collective and works on
//! their buffers in place.

use std::sync::Arc;

use super::data;
use super::loan::Loan;
use super::rendezvous::{Group, Meeting};
use crate::backend::{HostTensor, HostValues};
use crate::distributed::collective::{Call, Collective, check_agreement};
use crate::distributed::element::Element;
use crate::error::Result;
use crate::shape::Shape;

/// One rank's view of an in-process group.
pub(crate) struct InProcessEngine {
    group: Arc<Group>,
    rank: usize,
}

/// Where a collective left this rank's result.
enum Output<T> {
    /// In the rank's own input buffer, under this shape.
    InPlace(Shape),
    /// In a new buffer.
    Fresh(Vec<T>, Shape),
}

impl InProcessEngine {
    pub(crate) fn new(group: Arc<Group>, rank: usize) -> Self {
        Self { group, rank }
    }

    pub(crate) fn rank(&self) -> usize {
        self.rank
    }

    pub(crate) fn world_size(&self) -> usize {
        self.group.world_size()
    }

    /// Runs `call` on `input`'s values in their own element type.
    pub(crate) fn execute(&self, call: Call, input: HostTensor) -> Result<HostTensor> {
        let (values, shape) = match input.values {
            HostValues::F32(data) => {
                let (data, shape) = self.execute_in(&call, data)?;
                (HostValues::F32(data), shape)
            }
            HostValues::F64(data) => {
                let (data, shape) = self.execute_in(&call, data)?;
                (HostValues::F64(data), shape)
            }
        };
        Ok(HostTensor { values, shape })
    }

    fn execute_in<T: Element>(&self, call: &Call, mut data: Vec<T>) -> Result<(Vec<T>, Shape)> {
        // The other ranks use `data` from the meeting until `give_back`; the loan borrows it until then, and
        // takes it back through the leave barrier even if this rank unwinds (see `loan.rs`).
        let mut loan = Loan::new(&self.group, self.rank, call.collective.name(), &mut data);
        let output = self.work::<T>(loan.meet(call.clone())?, call);
        // Every rank leaves every meeting, even after a disagreement, so buffers are returned in step.
        let left = loan.give_back();
        let output = output?;
        left?;
        Ok(match output {
            Output::InPlace(shape) => (data, shape),
            Output::Fresh(data, shape) => (data, shape),
        })
    }

    /// Checks the arrivals agree (collective, shape and element type, so every buffer holds `T`), then runs this
    /// rank's part of the data phase.
    fn work<T: Element>(&self, meeting: &Meeting, call: &Call) -> Result<Output<T>> {
        let calls: Vec<Call> = meeting.arrivals.iter().map(|arrival| arrival.call.clone()).collect();
        check_agreement(call, &calls)?;
        let Some(operand) = &call.operand else {
            return Ok(Output::InPlace(Shape::new([0])));
        };
        let world_size = self.world_size();
        let output_shape = call.collective.output_shape(&operand.shape, world_size)?;
        let len = operand.shape.num_elements();
        match call.collective {
            Collective::AllReduce(op) => {
                data::all_reduce::<T>(meeting, self.rank, op, len)?;
                Ok(Output::InPlace(output_shape))
            }
            Collective::Broadcast { root } => {
                data::broadcast::<T>(meeting, self.rank, root)?;
                Ok(Output::InPlace(output_shape))
            }
            Collective::AllGather => Ok(Output::Fresh(data::all_gather(meeting, len)?, output_shape)),
            Collective::ReduceScatter(op) => {
                Ok(Output::Fresh(data::reduce_scatter(meeting, self.rank, op, len)?, output_shape))
            }
            Collective::Barrier => Ok(Output::InPlace(output_shape)),
        }
    }
}
