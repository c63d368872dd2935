// The speed floor of docs/speed.md ("How fast this workload can be simulated"): a lean,
// stand-alone simulator of BookSim2's minimal input-queued router on a k x k torus, the
// workload of the hw/booksim-min-torus*.ron presets, written as fast as it could be made
// (one struct per router, bit masks, a branch-free switch allocator, fixed event rings,
// unchecked indexing) and doing less than routemu does: no measurement beyond accepted
// flits and mean packet latency, no partitions, no configuration, one allocator. Its
// latencies match BookSim2's and routemu's (32.18 cycles at 0.1 flits/node/cycle on the
// 8x8 torus against routemu's 32.19), so it does the same simulation work per flit.
// NOT part of the routemu crate (cargo never builds it): benches/lean_floor.sh builds it
// with rustc in a scratch directory and times it beside routemu and BookSim2.
//
// Lean cycle-accurate model of a k x k bidirectional torus of BookSim2-style
// input-queued wormhole routers (router=iq, dim_order routing, 4 VCs x 8 flits,
// speculative separable-input-first VC/switch allocation, 1 iteration, RR).
//
// Usage: proto <k> <load flits/node/cycle> <cycles> [seed] [list|dense]
//
// Layout: one 64-byte aligned struct per router holding flat arrays indexed by
// input VC (port*4+vc) / output VC, with 20-bit masks for VC states. Flit
// traversal and credits go through fixed-delay event rings (fixed capacity,
// no allocation in the loop). Switch allocation is done branch-free with one
// byte lane per input port (pdep/pext SWAR).

use std::collections::VecDeque;

const V: usize = 4; // VCs per port
const P: usize = 5; // ports: 0:+x 1:-x 2:+y 3:-y 4:local
const NIV: usize = V * P; // input (and output) VCs per router = 20
const DEPTH: u8 = 8; // vc_buf_size
const PKT: u32 = 12; // packet_size

// flit encoding (u64): bit0 head, bit1 tail, bit2 ph (dateline partition),
// bits 8..24 dest, bits 32..64 creation time.
const F_HEAD: u64 = 1;
const F_TAIL: u64 = 2;
const F_PH: u64 = 4;
#[inline(always)]
fn f_dest(f: u64) -> usize {
    ((f >> 8) & 0xffff) as usize
}
#[inline(always)]
fn f_ctime(f: u64) -> u64 {
    f >> 32
}

// ---------------------------------------------------------------- RNG
struct Rng {
    s: [u64; 4],
}
impl Rng {
    fn new(seed: u64) -> Rng {
        let mut z = seed;
        let mut s = [0u64; 4];
        for x in s.iter_mut() {
            z = z.wrapping_add(0x9e3779b97f4a7c15);
            let mut t = z;
            t = (t ^ (t >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            t = (t ^ (t >> 27)).wrapping_mul(0x94d049bb133111eb);
            *x = t ^ (t >> 31);
        }
        Rng { s }
    }
    #[inline(always)]
    fn next(&mut self) -> u64 {
        // xoshiro256**
        let r = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        r
    }
}

// round-robin pick: first set bit of `mask` at or after `ptr`, wrapping.
#[inline(always)]
fn rr_pick(mask: u32, ptr: u8) -> usize {
    let hi = mask & (!0u32 << ptr);
    let sel = if hi != 0 { hi } else { mask };
    sel.trailing_zeros() as usize
}

#[cfg(target_feature = "bmi2")]
#[inline(always)]
fn pdep(x: u64, m: u64) -> u64 {
    unsafe { core::arch::x86_64::_pdep_u64(x, m) }
}
#[cfg(target_feature = "bmi2")]
#[inline(always)]
fn pext(x: u64, m: u64) -> u64 {
    unsafe { core::arch::x86_64::_pext_u64(x, m) }
}
#[cfg(not(target_feature = "bmi2"))]
fn pdep(x: u64, mut m: u64) -> u64 {
    let mut r = 0;
    let mut b = 1u64;
    while m != 0 {
        let l = m & m.wrapping_neg();
        if x & b != 0 {
            r |= l;
        }
        m ^= l;
        b <<= 1;
    }
    r
}
#[cfg(not(target_feature = "bmi2"))]
fn pext(x: u64, mut m: u64) -> u64 {
    let mut r = 0;
    let mut b = 1u64;
    while m != 0 {
        let l = m & m.wrapping_neg();
        if x & l != 0 {
            r |= b;
        }
        m ^= l;
        b <<= 1;
    }
    r
}

const LANE1: u64 = 0x01_01_01_01_01; // bit 0 of each of the 5 byte lanes
const NIB: u64 = 0x0F_0F_0F_0F_0F;

// ---------------------------------------------------------------- event buffer
// fixed capacity, push without capacity check (capacity proven by construction)
struct Ev<T: Copy> {
    d: Box<[T]>,
    len: usize,
}
impl<T: Copy + Default> Ev<T> {
    fn new(cap: usize) -> Self {
        Ev { d: vec![T::default(); cap].into_boxed_slice(), len: 0 }
    }
    #[inline(always)]
    fn push(&mut self, x: T) {
        debug_assert!(self.len < self.d.len());
        unsafe { *self.d.get_unchecked_mut(self.len) = x };
        self.len += 1;
    }
    // branch-free conditional push
    #[inline(always)]
    fn push_if(&mut self, x: T, c: bool) {
        debug_assert!(self.len < self.d.len());
        unsafe { *self.d.get_unchecked_mut(self.len) = x };
        self.len += c as usize;
    }
}

// ---------------------------------------------------------------- router state
#[repr(C, align(64))]
#[derive(Clone)]
struct Router {
    // masks over the 20 input VCs (bit = port*4+vc)
    nonempty: u32,
    va: u32,     // state vc_alloc (head at front, routed)
    active: u32, // state active (holds an output VC)
    in_cred: u32, // active input VCs whose output VC has >= 1 credit
    by_out: [u32; P], // input VCs (va or active) routed to each output port
    // masks over the 20 output VCs
    ovc_busy: u32, // allocated to some input VC (until tail sent)
    ovc_cred: u32, // has >= 1 credit
    sw_rr: [u8; P], // per input port VC rr offset (shared spec/non-spec)
    out_ptr: [[u8; P]; 2], // [nonspec, spec] output arbiters (over input ports)
    in_ptr_m: [u64; 2], // [nonspec, spec] input arbiters: per lane mask of bits >= ptr
    head: [u8; NIV],
    cnt: [u8; NIV],
    oport: [u8; NIV], // output port of the packet at the front
    vset: [u8; NIV],  // allowed VC set (4-bit) for the head at the front
    ovc: [u8; NIV],   // allocated output VC (port*4+vc) when active
    credits: [u8; NIV],
    owner: [u8; NIV], // input VC holding each output VC
    va_in_ptr: [u8; NIV],
    va_out_ptr: [u8; NIV],
}
type Buf = [[u64; DEPTH as usize]; NIV];

impl Router {
    fn new() -> Router {
        Router {
            nonempty: 0,
            va: 0,
            active: 0,
            in_cred: 0,
            by_out: [0; P],
            ovc_busy: 0,
            ovc_cred: (1u32 << NIV) - 1,
            sw_rr: [0; P],
            out_ptr: [[0; P]; 2],
            in_ptr_m: [LANE1 * 0x1F; 2],
            head: [0; NIV],
            cnt: [0; NIV],
            oport: [0; NIV],
            vset: [0; NIV],
            ovc: [0; NIV],
            credits: [DEPTH; NIV],
            owner: [0; NIV],
            va_in_ptr: [0; NIV],
            va_out_ptr: [0; NIV],
        }
    }
}

struct Source {
    queue: VecDeque<u64>, // pending packets: (ctime<<32 | dest<<8)
    cur: u64,
    left: u32, // flits of current packet still to send (0 = none)
    vc: i8,    // VC of the current packet (-1 = not yet chosen)
    last_vc: u8,
    busy: u8,      // injection VCs in use by a packet
    cred: [u8; V], // credits for router input port 4
}

struct Sim {
    k: usize,
    n: usize,
    routers: Vec<Router>,
    bufs: Vec<Buf>,
    dn: Vec<u32>, // dn[r*20+o]: global input VC fed by output VC o (eject: sink id)
    up: Vec<u32>, // up[r*20+i]: credit target for input VC i (router ovc or source vc)
    xy: Vec<(u8, u8)>,
    srcs: Vec<Source>,
    rng: Rng,
    inj_thresh: u64,
    // event rings
    arr: [Ev<(u32, u64)>; 4], // flit arrivals at router input VCs (delay 2 inj, 3 net)
    ej: [Ev<(u32, u64)>; 4],  // flits reaching the sink (delay 3)
    cred: [Ev<u32>; 4],       // credit returns (delay 2)
    act: Vec<u64>,            // bitset of routers with buffered flits
    src_act: Vec<u64>,        // bitset of sources with packets to send
    // stats
    warm: u64,
    flit_moves: u64,
    injected: u64,
    acc_flits: u64,
    lat_sum: u64,
    lat_n: u64,
    created: u64,
}

impl Sim {
    fn new(k: usize, load: f64, seed: u64) -> Sim {
        let n = k * k;
        let mut nbr = vec![0usize; n * 4];
        let mut xy = vec![(0u8, 0u8); n];
        for r in 0..n {
            let x = r % k;
            let y = r / k;
            xy[r] = (x as u8, y as u8);
            nbr[r * 4] = y * k + (x + 1) % k;
            nbr[r * 4 + 1] = y * k + (x + k - 1) % k;
            nbr[r * 4 + 2] = ((y + 1) % k) * k + x;
            nbr[r * 4 + 3] = ((y + k - 1) % k) * k + x;
        }
        let mut dn = vec![0u32; n * NIV];
        let mut up = vec![0u32; n * NIV];
        for r in 0..n {
            for o in 0..NIV {
                let (p, v) = (o / V, o % V);
                dn[r * NIV + o] = if p < 4 {
                    (nbr[r * 4 + p] * NIV + (p ^ 1) * V + v) as u32
                } else {
                    (r * V + v) as u32 // sink index
                };
                // input VC o = (p, v): upstream is neighbour through port p, its output p^1
                up[r * NIV + o] = if p < 4 {
                    (nbr[r * 4 + p] * NIV + (p ^ 1) * V + v) as u32
                } else {
                    (n * NIV + r * V + v) as u32 // source
                };
            }
        }
        let rate = load / PKT as f64;
        let inj_thresh = (rate * 18446744073709551616.0) as u64;
        Sim {
            k,
            n,
            routers: vec![Router::new(); n],
            bufs: vec![[[0u64; DEPTH as usize]; NIV]; n],
            dn,
            up,
            xy,
            srcs: (0..n)
                .map(|_| Source {
                    queue: VecDeque::with_capacity(1024),
                    cur: 0,
                    left: 0,
                    vc: -1,
                    last_vc: (V - 1) as u8,
                    busy: 0,
                    cred: [DEPTH; V],
                })
                .collect(),
            rng: Rng::new(seed),
            inj_thresh,
            arr: std::array::from_fn(|_| Ev::new(n * 6 + 8)),
            ej: std::array::from_fn(|_| Ev::new(n * 5 + 8)),
            cred: std::array::from_fn(|_| Ev::new(n * 6 + 8)),
            act: vec![0u64; (n + 63) / 64],
            src_act: vec![0u64; (n + 63) / 64],
            warm: 0,
            flit_moves: 0,
            injected: 0,
            acc_flits: 0,
            lat_sum: 0,
            lat_n: 0,
            created: 0,
        }
    }

    // Dimension-order torus routing exactly as BookSim's dor_next_torus /
    // dim_order_torus (non-balanced dateline partition kept in the head flit).
    // Returns (out_port, allowed 4-bit VC set) and updates ph in *f.
    #[inline(always)]
    fn route(k: usize, xy: &[(u8, u8)], rng: &mut Rng, r: usize, in_port: usize, f: &mut u64) -> (u8, u8) {
        let d = f_dest(*f);
        let (cx, cy) = unsafe { *xy.get_unchecked(r) };
        let (dx, dy) = unsafe { *xy.get_unchecked(d) };
        let (dim, c, t) = if cx != dx {
            (0usize, cx as usize, dx as usize)
        } else if cy != dy {
            (1usize, cy as usize, dy as usize)
        } else {
            return (4, 0xF); // eject: any VC
        };
        let out;
        if in_port / 2 != dim {
            // turning into a new dimension
            let dist2 = k as isize - 2 * (((t + k - c) % k) as isize);
            let dir;
            if dist2 > 0 || (dist2 == 0 && (rng.next() >> 63) != 0) {
                out = 2 * dim;
                dir = 0;
            } else {
                out = 2 * dim + 1;
                dir = 1;
            }
            let ph = (dir == 0 && c > t) || (dir == 1 && t < c);
            if ph {
                *f |= F_PH;
            } else {
                *f &= !F_PH;
            }
        } else {
            out = in_port ^ 1;
        }
        let allowed: u8 = if *f & F_PH != 0 { 0b1100 } else { 0b0011 };
        (out as u8, allowed)
    }

    // deliver a flit into input VC g = r*20 + i
    #[inline(always)]
    fn deliver(&mut self, g: u32, mut f: u64) {
        let r = g as usize / NIV;
        let i = g as usize % NIV;
        let k = self.k;
        let rt = unsafe { self.routers.get_unchecked_mut(r) };
        let c = unsafe { *rt.cnt.get_unchecked(i) };
        debug_assert!(c < DEPTH);
        let bit = 1u32 << i;
        if f & F_HEAD != 0 && c == 0 && (rt.active | rt.va) & bit == 0 {
            // idle VC: head arrives at front -> route (routing_delay=0) -> vc_alloc
            debug_assert!(f & F_HEAD != 0);
            let (op, vs) = Sim::route(k, &self.xy, &mut self.rng, r, i / V, &mut f);
            unsafe {
                *rt.oport.get_unchecked_mut(i) = op;
                *rt.vset.get_unchecked_mut(i) = vs;
                *rt.by_out.get_unchecked_mut(op as usize) |= bit;
            }
            rt.va |= bit;
        }
        unsafe {
            let slot = (*rt.head.get_unchecked(i) + c) & (DEPTH - 1);
            *self.bufs.get_unchecked_mut(r).get_unchecked_mut(i).get_unchecked_mut(slot as usize) = f;
            *rt.cnt.get_unchecked_mut(i) = c + 1;
            *self.act.get_unchecked_mut(r >> 6) |= 1u64 << (r & 63);
        }
        rt.nonempty |= bit;
    }

    fn sources(&mut self, t: u64) {
        let nmask = self.n as u64 - 1;
        let slot = ((t + 2) & 3) as usize;
        // Bernoulli packet generation at every node
        for s in 0..self.n {
            if self.rng.next() < self.inj_thresh {
                let d = (self.rng.next() >> 32) & nmask; // uniform incl. self
                unsafe { self.srcs.get_unchecked_mut(s) }.queue.push_back((t << 32) | (d << 8));
                self.src_act[s >> 6] |= 1u64 << (s & 63);
                if t >= self.warm {
                    self.created += 1;
                }
            }
        }
        // injection: only sources with a packet in progress or queued
        for w in 0..self.src_act.len() {
            let mut m = self.src_act[w];
            while m != 0 {
                let b = m.trailing_zeros() as usize;
                m &= m - 1;
                let s = w * 64 + b;
                let src = unsafe { self.srcs.get_unchecked_mut(s) };
                if src.left == 0 {
                    match src.queue.pop_front() {
                        Some(p) => {
                            src.cur = p;
                            src.left = PKT;
                            src.vc = -1;
                        }
                        None => {
                            self.src_act[w] &= !(1u64 << b);
                            continue;
                        }
                    }
                }
                if src.vc < 0 {
                    // choose first available non-full VC after the last one used
                    let lvc = src.last_vc as usize;
                    for j in 1..=V {
                        let vc = (lvc + j) % V;
                        if src.busy & (1 << vc) == 0 && src.cred[vc] > 0 {
                            src.vc = vc as i8;
                            src.busy |= 1 << vc;
                            break;
                        }
                    }
                    if src.vc < 0 {
                        continue;
                    }
                }
                let vc = src.vc as usize;
                if src.cred[vc] == 0 {
                    continue;
                }
                src.cred[vc] -= 1;
                src.last_vc = vc as u8;
                let mut f = src.cur;
                if src.left == PKT {
                    f |= F_HEAD;
                }
                src.left -= 1;
                if src.left == 0 {
                    f |= F_TAIL;
                    src.busy &= !(1 << vc);
                    if src.queue.is_empty() {
                        self.src_act[w] &= !(1u64 << b);
                    }
                }
                self.injected += 1;
                let g = (s * NIV + 4 * V + vc) as u32;
                self.arr[slot].push((g, f));
            }
        }
    }

    // Separable input-first switch allocation for one request class, branch-free.
    // req: 20-bit mask of requesting input VCs. Returns (granted input ports,
    // per-lane one-hot chosen output G, granted outputs mask).
    #[inline(always)]
    fn sw_alloc(rt: &mut Router, req: u32, a: usize) -> (u32, u64, u32) {
        // T: byte lane p = 5-bit mask of outputs requested by input port p
        let mut tm = 0u64;
        for o in 0..P {
            let s = pdep((req & rt.by_out[o]) as u64, NIB);
            tm |= ((s + NIB) & (LANE1 << 4)) >> (4 - o);
        }
        // input arbiters: round robin over outputs per lane
        let hi = tm & rt.in_ptr_m[a];
        let nzhi = ((hi + LANE1 * 0x1F) >> 5) & LANE1;
        let sel = nzhi * 0xFF;
        let x = ((hi & sel) | (tm & !sel)) | (LANE1 * 0x40);
        let g = x & ((!x & (LANE1 * 0x7F)) + LANE1) & (LANE1 * 0x1F);
        // output arbiters (only outputs that received a request)
        let mut gp = 0u32;
        let mut og = 0u32;
        let f1 = g | (g >> 8);
        let f2 = f1 | (f1 >> 16);
        let mut outs = ((f2 | (g >> 32)) & 0x1F) as u32;
        while outs != 0 {
            let o = outs.trailing_zeros() as usize;
            outs &= outs - 1;
            let rq = pext(g, LANE1 << o) as u32;
            let ptr = rt.out_ptr[a][o];
            let h = rq & (!0u32 << ptr);
            let s = if h != 0 { h } else { rq };
            let w = s & s.wrapping_neg();
            gp |= w;
            og |= 1 << o;
            let np = w.trailing_zeros() as u8 + 1;
            rt.out_ptr[a][o] = if np >= P as u8 { 0 } else { np };
        }
        // update input arbiters of granted ports: ptr = (o+1)%5
        let gl = pdep(gp as u64, LANE1) * 0xFF; // lanes of granted ports
        let gg = g & gl;
        // mask of bits >= o+1 within 5 bits: ~((gg<<1)-1) & 0x1F, or 0x1F when o==4
        let h2 = gg << 1; // per lane one-hot at o+1 (0x20 when o==4), zero when not granted
        let m = (!((h2 | (LANE1 * 0x80)) - LANE1) & (LANE1 * 0x1F)) | (((h2 >> 5) & LANE1) * 0x1F);
        rt.in_ptr_m[a] = (rt.in_ptr_m[a] & !gl) | (m & gl);
        (gp, g, og)
    }

    // one cycle of one router: VA + speculative SA (evaluate), then updates.
    #[inline(always)]
    fn step_router(&mut self, r: usize, t: u64) {
        let k = self.k;
        let rt = unsafe { self.routers.get_unchecked_mut(r) };
        let bf = unsafe { self.bufs.get_unchecked_mut(r) };
        macro_rules! g {
            ($a:expr, $i:expr) => {
                *unsafe { $a.get_unchecked($i) }
            };
        }
        macro_rules! s {
            ($a:expr, $i:expr, $v:expr) => {
                *unsafe { $a.get_unchecked_mut($i) } = $v
            };
        }

        // ---------------- VC allocation (separable input-first)
        let mut va_won = 0u32;
        let mut va_grant = [0u8; NIV];
        let mut sp_req = 0u32;
        if rt.va != 0 {
            let mut outreq = [0u32; NIV];
            let mut touched = 0u32;
            let mut m = rt.va;
            let free = !rt.ovc_busy;
            let fc = free & rt.ovc_cred;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                let route = (g!(rt.vset, i) as u32) << (g!(rt.oport, i) as u32 * 4);
                let req = route & free;
                // speculative SA request iff some VC is free and not full
                sp_req |= ((route & fc != 0) as u32) << i;
                if req != 0 {
                    let o = rr_pick(req, g!(rt.va_in_ptr, i));
                    s!(outreq, o, g!(outreq, o) | (1 << i));
                    touched |= 1 << o;
                }
            }
            while touched != 0 {
                let o = touched.trailing_zeros() as usize;
                touched &= touched - 1;
                let i = rr_pick(g!(outreq, o), g!(rt.va_out_ptr, o));
                va_won |= 1 << i;
                s!(va_grant, i, o as u8);
                s!(rt.va_in_ptr, i, if o + 1 == NIV { 0 } else { o as u8 + 1 });
                s!(rt.va_out_ptr, o, if i + 1 == NIV { 0 } else { i as u8 + 1 });
            }
        }

        // ---------------- switch allocation (non-spec, then spec)
        let ns_req = rt.active & rt.nonempty & rt.in_cred;
        let (gp0, g0, og0) = Sim::sw_alloc(rt, ns_req, 0);
        let mut fin = gp0;
        let mut fv = [0u8; 8]; // chosen VC per granted port
        let mut fo = [0u8; 8]; // output port per granted port
        if sp_req != 0 {
            let (gp1, g1, _og1) = Sim::sw_alloc(rt, sp_req, 1);
            // spec grant valid iff input & output free of non-spec grants,
            // VA succeeded and the new output VC has a credit.
            let mut m = gp1 & !gp0;
            while m != 0 {
                let p = m.trailing_zeros() as usize;
                m &= m - 1;
                let o = ((g1 >> (8 * p)) & 0x1F).trailing_zeros() as usize;
                if og0 & (1 << o) != 0 {
                    continue;
                }
                let vcs = (sp_req & g!(rt.by_out, o)) >> (p * V) & 0xF;
                let v = rr_pick(vcs, g!(rt.sw_rr, p));
                s!(rt.sw_rr, p, ((v + 1) & 3) as u8);
                let i = p * V + v;
                if va_won & (1 << i) != 0 && rt.ovc_cred & (1 << g!(va_grant, i)) != 0 {
                    fin |= 1 << p;
                    s!(fv, p, v as u8);
                    s!(fo, p, o as u8);
                }
            }
        }

        // ---------------- VA update
        let mut m = va_won;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            let o = g!(va_grant, i) as usize;
            s!(rt.ovc, i, o as u8);
            s!(rt.owner, o, i as u8);
            rt.in_cred = (rt.in_cred & !(1 << i)) | (((rt.ovc_cred >> o) & 1) << i);
            rt.ovc_busy |= 1 << o;
        }
        rt.va &= !va_won;
        rt.active |= va_won;

        // ---------------- SA update / switch + link traversal
        self.flit_moves += fin.count_ones() as u64;
        let arr = unsafe { self.arr.get_unchecked_mut(((t + 3) & 3) as usize) };
        let ej = unsafe { self.ej.get_unchecked_mut(((t + 3) & 3) as usize) };
        let cq = unsafe { self.cred.get_unchecked_mut(((t + 2) & 3) as usize) };
        let base = r * NIV;
        let mut m = fin;
        while m != 0 {
            let p = m.trailing_zeros() as usize;
            m &= m - 1;
            let (v, op) = if gp0 & (1 << p) != 0 {
                // non-spec grant: VC = first in rr order among this port's VCs for o
                let o = ((g0 >> (8 * p)) & 0x1F).trailing_zeros() as usize;
                let vcs = (ns_req & g!(rt.by_out, o)) >> (p * V) & 0xF;
                let v = rr_pick(vcs, g!(rt.sw_rr, p));
                s!(rt.sw_rr, p, ((v + 1) & 3) as u8);
                (v, o)
            } else {
                (g!(fv, p) as usize, g!(fo, p) as usize)
            };
            let i = p * V + v;
            let bit = 1u32 << i;
            let h = g!(rt.head, i);
            let f = g!(bf[i], h as usize);
            s!(rt.head, i, (h + 1) & (DEPTH - 1));
            let c = g!(rt.cnt, i) - 1;
            s!(rt.cnt, i, c);
            let o = g!(rt.ovc, i) as usize;
            let cr = g!(rt.credits, o) - 1;
            s!(rt.credits, o, cr);
            let z = (cr == 0) as u32;
            rt.ovc_cred &= !(z << o);
            rt.in_cred &= !(z << i);
            // downstream: network link or ejection to the sink
            let d = g!(self.dn, base + o);
            let is_ej = op == 4;
            arr.push_if((d, f), !is_ej);
            ej.push_if((d, f), is_ej);
            // credit upstream for the freed input buffer slot
            cq.push(g!(self.up, base + i));
            let tail = f & F_TAIL != 0;
            let tm = (tail as u32).wrapping_neg(); // all ones if tail
            rt.ovc_busy &= !(tm & (1 << o)); // wait_for_tail_credit = 0
            rt.active &= !(tm & bit);
            s!(rt.by_out, op, g!(rt.by_out, op) & !(tm & bit));
            rt.nonempty &= !(((c == 0) as u32) << i);
            if tail && c > 0 {
                // next packet's head reaches the front: route -> vc_alloc
                let hh = g!(rt.head, i) as usize;
                let mut nf = g!(bf[i], hh);
                debug_assert!(nf & F_HEAD != 0);
                let (op2, vs) = Sim::route(k, &self.xy, &mut self.rng, r, p, &mut nf);
                s!(bf[i], hh, nf);
                s!(rt.oport, i, op2);
                s!(rt.vset, i, vs);
                s!(rt.by_out, op2 as usize, g!(rt.by_out, op2 as usize) | bit);
                rt.va |= bit;
            }
        }
    }

    fn cycle(&mut self, t: u64, dense: bool) {
        let si = (t & 3) as usize;
        // credits (router -> upstream router / source)
        let lim = (self.n * NIV) as u32;
        {
            let cv = &mut self.cred[si];
            for j in 0..cv.len {
                let g = unsafe { *cv.d.get_unchecked(j) };
                if g < lim {
                    let rt = unsafe { self.routers.get_unchecked_mut(g as usize / NIV) };
                    let o = g as usize % NIV;
                    unsafe {
                        *rt.credits.get_unchecked_mut(o) += 1;
                        rt.in_cred |= ((rt.ovc_busy >> o) & 1) << *rt.owner.get_unchecked(o);
                    }
                    rt.ovc_cred |= 1 << o;
                } else {
                    let x = (g - lim) as usize;
                    unsafe { *self.srcs.get_unchecked_mut(x / V).cred.get_unchecked_mut(x % V) += 1 };
                }
            }
            cv.len = 0;
        }
        // flit arrivals
        let av = std::mem::replace(&mut self.arr[si], Ev { d: Box::new([]), len: 0 });
        for j in 0..av.len {
            let (g, f) = unsafe { *av.d.get_unchecked(j) };
            self.deliver(g, f);
        }
        self.arr[si] = av;
        self.arr[si].len = 0;
        // ejection sinks: count, and return the credit (usable 2 cycles later)
        {
            let cq = (((t + 2) & 3) as usize, si);
            let (evs, creds) = (&mut self.ej, &mut self.cred);
            let ev = &mut evs[cq.1];
            let cr = &mut creds[cq.0];
            let measure = t >= self.warm;
            for j in 0..ev.len {
                let (sk, f) = unsafe { *ev.d.get_unchecked(j) };
                let r = sk as usize / V;
                cr.push((r * NIV + 4 * V + sk as usize % V) as u32);
                if measure {
                    self.acc_flits += 1;
                    if f & F_TAIL != 0 && f_ctime(f) >= self.warm {
                        self.lat_sum += t - f_ctime(f);
                        self.lat_n += 1;
                    }
                }
            }
            ev.len = 0;
        }
        // terminals
        self.sources(t);
        // routers
        if dense {
            for r in 0..self.n {
                if self.routers[r].nonempty != 0 {
                    self.step_router(r, t);
                }
            }
        } else {
            for w in 0..self.act.len() {
                let mut m = self.act[w];
                while m != 0 {
                    let b = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let r = w * 64 + b;
                    self.step_router(r, t);
                    if self.routers[r].nonempty == 0 {
                        self.act[w] &= !(1u64 << b);
                    }
                }
            }
        }
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let k: usize = a.get(1).map(|s| s.parse().unwrap()).unwrap_or(8);
    let load: f64 = a.get(2).map(|s| s.parse().unwrap()).unwrap_or(0.1);
    let cycles: u64 = a.get(3).map(|s| s.parse().unwrap()).unwrap_or(200_000);
    let seed: u64 = a.get(4).map(|s| s.parse().unwrap()).unwrap_or(1);
    let dense = a.get(5).map(|s| s == "dense").unwrap_or(false);
    assert!(k.is_power_of_two() && k >= 2 && k * k <= 65536);
    let mut sim = Sim::new(k, load, seed);
    sim.warm = cycles / 10;
    let t0 = std::time::Instant::now();
    for t in 0..cycles {
        sim.cycle(t, dense);
    }
    let el = t0.elapsed().as_secs_f64();
    let win = (cycles - sim.warm) as f64 * sim.n as f64;
    let qd: usize = sim.srcs.iter().map(|s| s.queue.len()).sum();
    println!(
        "k={} load={} cycles={} mode={} | flit_moves={} injected={} accepted={:.4} flits/node/cycle \
         offered_meas={:.4} mean_pkt_latency={:.2} pkts={} hops/flit={:.3} src_queue_left={} wall={:.3}s ns/flitmove={:.2}",
        k,
        load,
        cycles,
        if dense { "dense" } else { "list" },
        sim.flit_moves,
        sim.injected,
        sim.acc_flits as f64 / win,
        sim.created as f64 * PKT as f64 / win,
        sim.lat_sum as f64 / sim.lat_n.max(1) as f64,
        sim.lat_n,
        sim.flit_moves as f64 / sim.injected as f64,
        qd,
        el,
        el * 1e9 / sim.flit_moves as f64
    );
}
