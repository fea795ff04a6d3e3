//! Memory for tensor buffers: allocation that fails with [`Error::OutOfMemory`] instead of aborting the process.
//!
//! Rust aborts the process when an allocation fails, and candle and ndarray allocate the outputs of their ops with
//! such allocations. So every buffer dispatch allocates itself comes from [`try_vec`], [`try_filled`] or
//! [`try_room`], and every backend calls [`check_room`] with an op's output size before it calls a library that
//! allocates that output.
//! A third-party backend does the same to keep the promise that a shape too large for memory is an `Err`.
//!
//! # The rule
//!
//! A request for a buffer of `bytes` is refused when
//! 1. `bytes` is more than [`limit`]: the physical memory plus swap of this machine, or of the process's cgroup if
//!    that is lower (a container's memory limit), read once. No buffer that large can ever be backed, whatever
//!    the kernel promises: under Linux's overcommit a larger reservation may succeed and then the process is
//!    killed when it writes, so this bound is checked here rather than left to the allocator;
//! 2. or the allocator refuses to reserve `bytes` now: [`try_vec`] and [`try_filled`] allocate fallibly, and
//!    [`check_room`] reserves the size once and frees it (for requests of 1 MiB or more, where a refusal is
//!    plausible: strict overcommit accounting, `ulimit -v`, an exhausted address space).
//!
//! What no library can promise: under overcommit, a buffer within the limit is reserved but backed only when it
//! is written. If the machine's free memory runs out meanwhile (other processes grew, or several large tensors
//! are alive at once), the kernel's OOM killer ends a process; that is the kernel's decision, not an error this
//! process can see. A request below 1 MiB is not probed: if that fails, everything in the process fails with it
//! (Rust's standard library aborts on any failed allocation), and a probe per small op would cost a `malloc`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};

/// Requests from this size on are reserved once by [`check_room`] before a library allocates them.
const PROBE_FROM: usize = 1 << 20;

/// The most bytes one buffer may take on this machine: physical memory plus swap, or the memory (plus swap) limit
/// of this process's cgroup when that is lower; at most `isize::MAX`, the bound of every Rust allocation. Read
/// once, on first use; where the system does not tell (no `/proc/meminfo`), only the `isize::MAX` bound applies.
pub fn limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(read_limit)
}

/// Checks that an output of `elements` elements of `element_size` bytes each can be allocated for `op`, before a
/// library that aborts on a failed allocation allocates it. See [the rule](self#the-rule).
pub fn check_room(op: &'static str, elements: usize, element_size: usize) -> Result<()> {
    let bytes = bytes_of(op, elements, element_size)?;
    check_limit(op, bytes, limit())?;
    if bytes >= PROBE_FROM {
        // Reserved and freed at once: never written, so it costs address space for a moment, not memory.
        Vec::<u8>::new().try_reserve_exact(bytes).map_err(|_| out_of_memory(op, bytes))?;
    }
    Ok(())
}

/// An empty vector with room for exactly `len` values, or [`Error::OutOfMemory`] naming `op`.
pub fn try_vec<T>(op: &'static str, len: usize) -> Result<Vec<T>> {
    let mut values = Vec::new();
    try_room(op, &mut values, len)?;
    Ok(values)
}

/// Room in `values` for `len` values in all (the ones it holds among them), or [`Error::OutOfMemory`] naming `op`:
/// for an output written into a buffer an earlier tensor left.
pub fn try_room<T>(op: &'static str, values: &mut Vec<T>, len: usize) -> Result<()> {
    let bytes = bytes_of(op, len, size_of::<T>())?;
    check_limit(op, bytes, limit())?;
    let more = len.saturating_sub(values.len());
    values.try_reserve_exact(more).map_err(|_| out_of_memory(op, bytes))
}

/// `len` copies of `value`, or [`Error::OutOfMemory`] naming `op`.
pub fn try_filled<T: Clone>(op: &'static str, len: usize, value: T) -> Result<Vec<T>> {
    let mut values = try_vec(op, len)?;
    values.resize(len, value);
    Ok(values)
}

/// A copy of `values`, or [`Error::OutOfMemory`] naming `op`.
pub fn try_copy<T: Clone>(op: &'static str, values: &[T]) -> Result<Vec<T>> {
    let mut copy = try_vec(op, values.len())?;
    copy.extend_from_slice(values);
    Ok(copy)
}

/// The most bytes glibc serves from its heap rather than from a mapping of their own: the largest threshold it takes.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const HEAP_UP_TO: libc::c_int = 32 << 20;

/// Free heap glibc may hold at its top before it gives any back to the kernel.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const HOLD_UP_TO: libc::c_int = 1 << 30;

/// Asks the C allocator to keep the memory this process frees for its next allocations, and returns whether it
/// could. A training step frees most of its tensors and allocates them again in the next step; glibc's default gives
/// large freed blocks back to the kernel (heap trimming, and a mapping per block above its threshold), so every
/// step faults those pages in again and the kernel clears each one. candle's CPU GPT step spent about a fifth of its
/// time there (BENCHMARKS.md, group 7): about 2,000 page faults a step, under 100 with this call. The cost is that
/// the process keeps the memory of its largest step until it exits.
///
/// It changes the whole process (every allocation, not only dispatch's), so it is the application's call, made
/// once at the start of `main`, like `parallel::build_pool_with_calling_thread`. With glibc
/// (Linux, the `gnu` target environment) it sets `M_MMAP_THRESHOLD` to 32 MiB, the most glibc takes, and
/// `M_TRIM_THRESHOLD` to 1 GiB, the same as the environment variables `MALLOC_MMAP_THRESHOLD_=33554432` and
/// `MALLOC_TRIM_THRESHOLD_=1073741824`; both are needed, since setting either turns off glibc's own adjustment of
/// the other. Elsewhere it does nothing and returns `false`.
///
/// Once it has returned `true`, the ndarray backend keeps fewer freed buffers of its own (a kept buffer that fits no
/// request goes back to the allocator, which now serves the next one from it without a page fault): a GPT step's
/// peak memory is then about three quarters of what it was, at the same speed (BENCHMARKS.md, group 6).
pub fn keep_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallopt` takes glibc's arena lock itself and only changes two tuning parameters.
        let heap = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, HEAP_UP_TO) };
        // SAFETY: as above.
        let hold = unsafe { libc::mallopt(libc::M_TRIM_THRESHOLD, HOLD_UP_TO) };
        let kept = heap == 1 && hold == 1;
        FREED_MEMORY_KEPT.fetch_or(kept, Ordering::Relaxed);
        kept
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Whether [`keep_freed_memory`] has succeeded in this process.
static FREED_MEMORY_KEPT: AtomicBool = AtomicBool::new(false);

/// Whether the allocator keeps what this process frees for its next allocations ([`keep_freed_memory`] succeeded),
/// so that memory handed back costs no page faults when it is asked for again. (Only the ndarray backend's kept
/// buffers ask.)
#[cfg_attr(not(feature = "ndarray"), allow(dead_code))]
pub(crate) fn allocator_keeps_freed_memory() -> bool {
    FREED_MEMORY_KEPT.load(Ordering::Relaxed)
}

/// The size of the request; one whose size overflows asks for more than any machine has.
fn bytes_of(op: &'static str, elements: usize, element_size: usize) -> Result<usize> {
    elements.checked_mul(element_size).ok_or_else(|| out_of_memory(op, usize::MAX))
}

fn check_limit(op: &'static str, bytes: usize, limit: usize) -> Result<()> {
    if bytes > limit { Err(out_of_memory(op, bytes)) } else { Ok(()) }
}

fn out_of_memory(op: &'static str, bytes: usize) -> Error {
    Error::OutOfMemory { op, bytes }
}

fn read_limit() -> usize {
    let machine = std::fs::read_to_string("/proc/meminfo").ok().as_deref().and_then(parse_meminfo);
    let cgroup = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .map(|membership| cgroup_limits(&membership, Path::new("/sys/fs/cgroup")))
        .unwrap_or_default();
    combine(machine, cgroup)
}

/// Memory and swap, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Capacity {
    memory: usize,
    swap: usize,
}

/// Limits set by cgroups, in bytes; `None` where there is none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct CgroupLimits {
    memory: Option<usize>,
    swap: Option<usize>,
}

fn combine(machine: Option<Capacity>, cgroup: CgroupLimits) -> usize {
    let rust_bound = isize::MAX as usize;
    let Some(machine) = machine else {
        return cgroup.memory.map_or(rust_bound, |memory| memory.saturating_add(cgroup.swap.unwrap_or(0)));
    };
    let memory = cgroup.memory.map_or(machine.memory, |limit| limit.min(machine.memory));
    let swap = cgroup.swap.map_or(machine.swap, |limit| limit.min(machine.swap));
    memory.saturating_add(swap).min(rust_bound)
}

/// `MemTotal` and `SwapTotal` of `/proc/meminfo` (given in kB).
fn parse_meminfo(meminfo: &str) -> Option<Capacity> {
    let field = |name: &str| {
        let line = meminfo.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))?;
        let kilobytes: usize = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
        kilobytes.checked_mul(1024)
    };
    Some(Capacity { memory: field("MemTotal")?, swap: field("SwapTotal").unwrap_or(0) })
}

/// The lowest limits on the way from this process's cgroup up to the root, for cgroup v2 (`0::/path`, files
/// `memory.max` and `memory.swap.max`) and v1 (`N:...memory...:/path`, file `memory/.../memory.limit_in_bytes`).
fn cgroup_limits(membership: &str, root: &Path) -> CgroupLimits {
    let mut limits = CgroupLimits::default();
    for line in membership.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let path = path.trim_start_matches('/');
        if controllers.is_empty() {
            lower(&mut limits.memory, lowest_on_the_way_up(&root.join(path), root, "memory.max"));
            lower(&mut limits.swap, lowest_on_the_way_up(&root.join(path), root, "memory.swap.max"));
        } else if controllers.split(',').any(|controller| controller == "memory") {
            let v1_root = root.join("memory");
            lower(&mut limits.memory, lowest_on_the_way_up(&v1_root.join(path), &v1_root, "memory.limit_in_bytes"));
        }
    }
    limits
}

fn lower(limit: &mut Option<usize>, candidate: Option<usize>) {
    *limit = match (*limit, candidate) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
}

/// The lowest value of `file` in `start` and each of its parents up to `root` (a parent's limit binds its children).
fn lowest_on_the_way_up(start: &Path, root: &Path, file: &str) -> Option<usize> {
    let mut lowest = None;
    let mut directory: Option<PathBuf> = Some(start.to_path_buf());
    while let Some(current) = directory {
        if !current.starts_with(root) {
            break;
        }
        let value = std::fs::read_to_string(current.join(file)).ok().as_deref().and_then(parse_cgroup_value);
        lower(&mut lowest, value);
        directory = current.parent().map(Path::to_path_buf);
    }
    lowest
}

/// A cgroup limit file: a number of bytes, or `max` for none.
fn parse_cgroup_value(text: &str) -> Option<usize> {
    text.trim().parse::<u64>().ok().and_then(|bytes| usize::try_from(bytes).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_takes_both_settings_and_other_c_libraries_report_false() {
        let glibc = cfg!(all(target_os = "linux", target_env = "gnu"));
        assert_eq!(keep_freed_memory(), glibc);
        // A second call sets the same values again.
        assert_eq!(keep_freed_memory(), glibc);
        assert_eq!(allocator_keeps_freed_memory(), glibc);
    }

    const MEMINFO: &str = "MemTotal:       24731184 kB\nMemFree:        23000000 kB\nSwapTotal:       2097148 kB\n";

    #[test]
    fn the_machine_capacity_is_read_from_meminfo() {
        let capacity = parse_meminfo(MEMINFO).unwrap();
        assert_eq!(capacity, Capacity { memory: 24_731_184 * 1024, swap: 2_097_148 * 1024 });
        assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), Some(Capacity { memory: 1024, swap: 0 }));
        assert_eq!(parse_meminfo("nothing here"), None);
    }

    #[test]
    fn the_limit_is_memory_plus_swap_lowered_by_the_cgroup() {
        let machine = Some(Capacity { memory: 16 << 30, swap: 2 << 30 });
        assert_eq!(combine(machine, CgroupLimits::default()), 18 << 30);
        let container = CgroupLimits { memory: Some(4 << 30), swap: Some(0) };
        assert_eq!(combine(machine, container), 4 << 30);
        assert_eq!(combine(machine, CgroupLimits { memory: Some(64 << 30), swap: None }), 18 << 30);
        assert_eq!(combine(None, CgroupLimits::default()), isize::MAX as usize);
    }

    #[test]
    fn cgroup_limits_are_the_lowest_on_the_way_to_the_root() {
        let root = std::env::temp_dir().join(format!("dispatch-cgroup-test-{}", std::process::id()));
        let leaf = root.join("outer/inner");
        std::fs::create_dir_all(&leaf).unwrap();
        std::fs::write(root.join("outer/memory.max"), "1073741824\n").unwrap();
        std::fs::write(leaf.join("memory.max"), "max\n").unwrap();
        std::fs::write(leaf.join("memory.swap.max"), "0\n").unwrap();
        let limits = cgroup_limits("0::/outer/inner\n", &root);
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(limits, CgroupLimits { memory: Some(1 << 30), swap: Some(0) });
        assert_eq!(cgroup_limits("0::/elsewhere\n", Path::new("/nonexistent")), CgroupLimits::default());
    }

    #[test]
    fn this_machines_limit_is_what_it_has() {
        let limit = limit();
        assert!(limit >= PROBE_FROM && limit <= isize::MAX as usize, "{limit}");
        if let Some(machine) = std::fs::read_to_string("/proc/meminfo").ok().as_deref().and_then(parse_meminfo) {
            assert!(limit <= machine.memory + machine.swap, "{limit} is more than {machine:?}");
        }
    }

    #[test]
    fn requests_beyond_the_limit_or_overflowing_are_out_of_memory_naming_op_and_bytes() {
        let over = limit() + 1;
        let error = check_room("full", over, 1).unwrap_err();
        assert!(matches!(error, Error::OutOfMemory { op: "full", bytes } if bytes == over), "{error}");
        let error = check_room("matmul", usize::MAX / 2, 4).unwrap_err();
        assert!(matches!(error, Error::OutOfMemory { op: "matmul", bytes: usize::MAX }), "{error}");
        let error = try_vec::<f32>("to_vec", 1 << 60).unwrap_err();
        assert!(matches!(error, Error::OutOfMemory { op: "to_vec", bytes } if bytes == 1 << 62), "{error}");
        assert!(try_filled("one_hot", usize::MAX, 0u8).is_err());
    }

    #[test]
    fn requests_that_fit_are_granted() {
        assert!(check_room("add", 1 << 20, 4).is_ok());
        assert!(check_room("add", 0, 4).is_ok());
        assert_eq!(try_filled("full", 3, 1.5f32).unwrap(), [1.5; 3]);
        assert_eq!(try_copy("to_vec", &[1, 2]).unwrap(), [1, 2]);
        assert!(try_vec::<f32>("from_vec", 5).unwrap().capacity() >= 5);
    }
}
