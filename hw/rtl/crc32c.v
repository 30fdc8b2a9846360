// crc32c: CRC32c (Castagnoli) of an AXI4-Stream, DATA_W bits per clock,
// resumable across segments with the state kept outside the block.
//
// The CRC is the one MPA carries in every FPDU (RFC 5044 4.4) and iSCSI in
// its digests (RFC 3720 B.4): reflected polynomial 0x82F63B78, initial value
// and final XOR 0xFFFFFFFF; it equals iwarp/crc32c's Checksum and Update for
// the same octets. Markers, pad and headers are data like any other here:
// what goes in is the framer's or delineator's business.
//
// Input, s_axis (a "segment" is the run of beats up to and including tlast):
//   tdata   octet k of the word in tdata[8k+7:8k]; octet 0 comes first in
//           the stream, as everywhere in AXI4-Stream.
//   tkeep   one bit per octet. The valid octets of a segment must be one
//           contiguous run: a segment may begin with null octets (leading
//           zeros of tkeep in its first beats) and end with null octets
//           (trailing zeros in its last beats), but has none in between.
//           Any such run works, including one octet, or none at all (an
//           empty segment, which returns its starting state). Other tkeep
//           patterns give an undefined CRC.
//   tlast   ends the segment; the block outputs one result per segment.
//   tid     ID_W bits, e.g. a connection number; sampled with tlast and
//           returned with the result.
//   tuser   {state[31:0], init}, sampled with the first beat of a segment
//           (the beat after reset or after a tlast beat) and ignored on the
//           others. init = 1 starts a new CRC; init = 0 resumes from state,
//           which is a result this block returned earlier (or the value
//           iwarp/crc32c.Update would start from). The state is the running
//           CRC: the CRC32c of the octets so far, final XOR included, so
//           one 32-bit table entry per connection holds everything, and the
//           result of a segment that ends an FPDU is that FPDU's CRC.
//   tready  registered. High whenever fewer than OUT_DEPTH (8) results
//           are in flight or waiting on m_axis_crc, so it only drops when
//           the consumer of the results holds m_axis_crc_tready low.
//
// Output, m_axis_crc: one transfer per input segment, in order.
//   tdata   the running CRC after the segment (the CRC32c of every octet
//           since the init, resumed segments included). Read as AXI4-Stream
//           octets, tdata[7:0] first, it is also the CRC in MPA wire order
//           (least significant octet first): comparing it with the 4 octets
//           of a received CRC field in the same lanes needs no swap.
//   tid     the segment's tid.
//   (no tlast, no tkeep: every transfer is one complete result.)
//
// Throughput: one beat per clock, whatever the tkeep pattern, with segments
// back to back (a single-beat segment every clock included).
// Latency: 7 clocks from the clock edge that accepts a segment's tlast beat
// to the edge where its result can first be taken (m_axis_crc_tvalid high).
//
// How: an octet b moves the 32-bit CRC register r (reflected, the way
// hash/crc32 keeps it) to A^8 r + B b, a linear map over GF(2), so a word of
// N = DATA_W/8 octets moves it to A^(8N) r + D w, where D is a 32 x DATA_W
// matrix and w the word. A word whose octets s .. N-1-t are valid is fed
// whole with its null octets zeroed: leading zeros are cancelled by starting
// the segment from A^(-8s) r0 instead of its start register r0, trailing
// zeros by moving the final register back over t octets, A^(-8t). Every
// matrix is derived from the polynomial at elaboration by a constant
// function; the powers of A picked at run time by s or t come from tables
// of 8 or 9, two tables per count (its low three bits, then the rest).
// Pipeline, each stage the logic in front of its registers:
//   s0   input registers.
//   s1   data term D w (w with null octets zeroed), a 32 x DATA_W XOR network;
//        s and t from tkeep; r0 from tuser, or held from the segment start.
//   s2   A^(-8 (s mod 8)) r0.
//   s3   A^(8N - 64 (s div 8)) of that, XORed into the data term of a
//        segment's first beat with a valid octet.
//   r    the datapath's one feedback loop: r <= (first ? 0 : A^(8N) r) ^ term;
//        the data and start terms come ready from s3, so the loop is one fixed
//        32x32 XOR network (at most 23 inputs per output bit) and a gate.
//   u1   A^(-8 (t mod 8)) r after a segment's last beat.
//   out  A^(-64 (t div 8)) of that and the final XOR, into the result FIFO.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module crc32c #(
    parameter DATA_W = 64,
    parameter ID_W = 8
) (
    input  wire                clk,
    input  wire                rst,

    input  wire [DATA_W-1:0]   s_axis_tdata,
    input  wire [DATA_W/8-1:0] s_axis_tkeep,
    input  wire                s_axis_tvalid,
    output wire                s_axis_tready,
    input  wire                s_axis_tlast,
    input  wire [ID_W-1:0]     s_axis_tid,
    input  wire [32:0]         s_axis_tuser,

    output wire [31:0]         m_axis_crc_tdata,
    output wire [ID_W-1:0]     m_axis_crc_tid,
    output wire                m_axis_crc_tvalid,
    input  wire                m_axis_crc_tready
);

localparam KEEP_W = DATA_W / 8;          // octets per word, N
localparam KEEP_LOG = $clog2(KEEP_W);
localparam CNT_W = KEEP_LOG + 1;         // an octet count 0 .. N
localparam HI_W = CNT_W - 3;             // a count divided by 8
localparam HI_N = KEEP_W / 8 + 1;        // values of a count divided by 8
localparam [31:0] POLY = 32'h82F63B78;   // reflected Castagnoli polynomial
localparam OPT_MAX = 9;                  // matrices in a run-time choice

// Results in flight (pipeline) plus waiting (FIFO); must exceed the latency
// for s_axis_tready to stay high at one result per clock.
localparam OUT_AW = 3;
localparam OUT_DEPTH = 1 << OUT_AW;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("crc32c: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
    if (ID_W < 1) begin
        $error("crc32c: ID_W must be at least 1, got %0d", ID_W);
        $finish;
    end
end

// --- GF(2) matrices, derived at elaboration ---------------------------------
//
// crc_pow, data_row and mat_table run only at elaboration (they make the
// localparams below), so no simulation reaches their lines: they are kept
// out of the coverage count. mat_mul builds the run-time XOR networks.
//
// A is the CRC register's step over one zero bit: r' = (r >> 1) ^ (r[0] ? P : 0).
// It is invertible (P has bit 31 set, so r[0] reappears as r'[31]).

// crc_pow(e): A^e as a 32x32 matrix, row-major (bit 32*i+k is row i, column
// k); e < 0 moves back over -e bits. Unit vector k is A^(31-k) applied to
// unit vector 31, so column k of A^e is x(e+31-k) in the one sequence
// x(n) = A^n e31, which is walked once (forward, then backward for n < 0).
// verilator coverage_off
function [1023:0] crc_pow(input integer e);
    integer i, n;
    reg [31:0] v;
    begin
        crc_pow = {1024{1'b0}};
        v = 32'h80000000;
        for (n = 0; n <= e + 31; n = n + 1) begin
            if (n >= e) begin
                for (i = 0; i < 32; i = i + 1) begin
                    crc_pow[32*i + e + 31 - n] = v[i];
                end
            end
            v = {1'b0, v[31:1]} ^ (POLY & {32{v[0]}});
        end
        v = 32'h80000000;
        for (n = -1; n >= e; n = n - 1) begin
            v = {v[30:0] ^ (POLY[30:0] & {31{v[31]}}), v[31]};
            if (n <= e + 31) begin
                for (i = 0; i < 32; i = i + 1) begin
                    crc_pow[32*i + e + 31 - n] = v[i];
                end
            end
        end
    end
endfunction

// data_row(i): row i of the data matrix D of a whole word: bit j says
// whether data bit j (taken in j-th, octet 0's least significant bit first)
// flips register bit i, starting from a zero register. Column j is
// A^(DATA_W-1-j) P: the bit leaves P in the register, then the rest of the
// word shifts it on.
function [DATA_W-1:0] data_row(input [4:0] i);
    integer j;
    reg [31:0] v;
    begin
        data_row = {DATA_W{1'b0}};
        v = POLY;
        for (j = DATA_W - 1; j >= 0; j = j - 1) begin
            data_row[j] = v[i];
            v = {1'b0, v[31:1]} ^ (POLY & {32{v[0]}});
        end
    end
endfunction

// verilator coverage_on

// mat_mul(m, v): the 32x32 matrix m (row-major) times v; m is a constant,
// so this is a fixed XOR network.
function [31:0] mat_mul(input [1023:0] m, input [31:0] v);
    integer i;
    begin
        for (i = 0; i < 32; i = i + 1) begin
            mat_mul[i] = ^(m[32*i +: 32] & v);
        end
    end
endfunction

// mat_table(e0, de, n): the n matrices A^(e0 + o de), o = 0 .. n-1, laid
// out by rows for a choice at run time: row i of matrix o at bits
// [32*(OPT_MAX*i + o) +: 32]. Choosing a matrix row by row (a one-hot
// AND-OR of constant rows gives a 32-bit mask per output bit, then AND and
// XOR with the vector) maps to fewer LUTs than computing every product and
// choosing one. (Indexing the tables with a variable part-select instead
// makes Yosys 0.23 very slow; a function for the row choice makes the C++
// model that Verilator writes slow to compile.)
// verilator coverage_off
function [1024*OPT_MAX-1:0] mat_table(input integer e0, input integer de, input integer n);
    integer o, i;
    reg [1023:0] m;
    begin
        for (o = 0; o < OPT_MAX; o = o + 1) begin
            m = {1024{1'b0}};
            if (o < n) begin
                m = crc_pow(e0 + o * de);
            end
            for (i = 0; i < 32; i = i + 1) begin
                mat_table[32*(OPT_MAX*i + o) +: 32] = m[32*i +: 32];
            end
        end
    end
endfunction
// verilator coverage_on

localparam [1023:0] WORD_MAT = crc_pow(DATA_W);   // A^(8N): one whole word

// Matrices chosen at run time by an octet count.
localparam [1024*OPT_MAX-1:0] BACK_LO = mat_table(0, -8, 8);           // A^(-8 o), o < 8
localparam [1024*OPT_MAX-1:0] START_HI = mat_table(DATA_W, -64, HI_N); // A^(8N - 64 o), o <= N/8
localparam [1024*OPT_MAX-1:0] BACK_HI = mat_table(0, -64, HI_N - 1);   // A^(-64 o), o < N/8

genvar g;

// --- s0: input registers ----------------------------------------------------

reg              s_axis_tready_reg = 1'b0, s_axis_tready_next;

reg              s0_valid_reg = 1'b0;
reg [DATA_W-1:0] s0_data_reg;
reg [KEEP_W-1:0] s0_keep_reg;
reg              s0_last_reg;
reg [ID_W-1:0]   s0_id_reg;
reg [32:0]       s0_user_reg;

assign s_axis_tready = s_axis_tready_reg;

wire s_accept = s_axis_tvalid && s_axis_tready_reg;

// --- s1: data term, null octets, segment start ------------------------------

// Segment state: the next beat starts a segment; no valid octet yet in this
// segment; the register value the segment starts from.
reg        seg_start_reg = 1'b1, seg_start_next;
reg        seg_none_reg = 1'b1, seg_none_next;
reg [31:0] seg_r0_reg, seg_r0_next;

reg [DATA_W-1:0] s0_zeroed;                  // null octets cleared
reg [KEEP_W-1:0] keep_rise, keep_fall;       // first, last valid octet
reg [KEEP_LOG-1:0] first_idx, last_idx;
reg              s0_any;                     // any valid octet in the beat
reg [CNT_W-1:0]  s0_lead, s0_trail;          // s and t
reg              s0_first;                   // the beat loads r from r0
reg              s0_upd;                     // the beat changes r
reg [31:0]       s0_r0;

reg              s1_valid_reg = 1'b0;
reg              s1_upd_reg = 1'b0;
reg              s1_first_reg;
reg              s1_last_reg;
reg [ID_W-1:0]   s1_id_reg;
reg [31:0]       s1_d_reg;
reg [31:0]       s1_r0_reg;
reg [CNT_W-1:0]  s1_lead_reg;
reg [CNT_W-1:0]  s1_trail_reg;

wire [31:0] d_term;   // D times the zeroed word

generate
    for (g = 0; g < 32; g = g + 1) begin : g_d_term
        localparam [4:0] BIT = g;
        localparam [DATA_W-1:0] ROW = data_row(BIT);
        assign d_term[g] = ^(s0_zeroed & ROW);
    end
endgenerate

integer k;

always @* begin
    for (k = 0; k < KEEP_W; k = k + 1) begin
        s0_zeroed[8*k +: 8] = s0_data_reg[8*k +: 8] & {8{s0_keep_reg[k]}};
    end

    // With one contiguous run of valid octets, exactly one octet starts it
    // and one ends it; encode their positions.
    keep_rise = s0_keep_reg & ~{s0_keep_reg[KEEP_W-2:0], 1'b0};
    keep_fall = s0_keep_reg & ~{1'b0, s0_keep_reg[KEEP_W-1:1]};
    first_idx = {KEEP_LOG{1'b0}};
    last_idx = {KEEP_LOG{1'b0}};
    for (k = 0; k < KEEP_W; k = k + 1) begin
        first_idx = first_idx | ({KEEP_LOG{keep_rise[k]}} & k[KEEP_LOG-1:0]);
        last_idx = last_idx | ({KEEP_LOG{keep_fall[k]}} & k[KEEP_LOG-1:0]);
    end
    s0_any = |s0_keep_reg;
    // An empty beat counts as N leading null octets, so that a segment with
    // no valid octet at all starts (and ends) at A^(8N - 8N) r0 = r0.
    s0_lead = s0_any ? {1'b0, first_idx} : KEEP_W[CNT_W-1:0];
    s0_trail = s0_any ? {1'b0, ~last_idx} : {CNT_W{1'b0}};

    // init = 1 starts from the empty message, whose raw register is all ones;
    // a saved state is a finished CRC, the complement of the raw register.
    s0_r0 = seg_start_reg ? ~(s0_user_reg[32:1] & {32{!s0_user_reg[0]}}) : seg_r0_reg;
    // The first beat with a valid octet loads r from r0, or the last beat of
    // a segment that had none. Empty beats elsewhere leave r alone.
    s0_first = (seg_start_reg || seg_none_reg) && (s0_any || s0_last_reg);
    s0_upd = s0_valid_reg && (s0_any || s0_first);

    seg_start_next = seg_start_reg;
    seg_none_next = seg_none_reg;
    seg_r0_next = seg_r0_reg;
    if (s0_valid_reg) begin
        seg_start_next = s0_last_reg;
        seg_none_next = s0_last_reg || ((seg_start_reg || seg_none_reg) && !s0_any);
        seg_r0_next = s0_r0;
    end
end

// --- s2, s3: the start term for a segment's first data beat -----------------

reg              s2_valid_reg = 1'b0;
reg              s2_upd_reg = 1'b0;
reg              s2_first_reg;
reg              s2_last_reg;
reg [ID_W-1:0]   s2_id_reg;
reg [31:0]       s2_d_reg;
reg [31:0]       s2_start_reg;
reg [HI_W-1:0]   s2_lead_hi_reg;
reg [CNT_W-1:0]  s2_trail_reg;

reg              s3_valid_reg = 1'b0;
reg              s3_upd_reg = 1'b0;
reg              s3_first_reg;
reg              s3_last_reg;
reg [ID_W-1:0]   s3_id_reg;
reg [31:0]       s3_term_reg;
reg [CNT_W-1:0]  s3_trail_reg;

reg  [OPT_MAX-1:0] lead_lo_hot, lead_hi_hot;   // s mod 8, s div 8, one-hot
wire [31:0]        s2_start_next;
wire [31:0]        start_hi;

integer ls;

always @* begin
    for (ls = 0; ls < OPT_MAX; ls = ls + 1) begin
        lead_lo_hot[ls] = ls < 8 && s1_lead_reg[2:0] == ls[2:0];
        lead_hi_hot[ls] = ls < HI_N && s2_lead_hi_reg == ls[HI_W-1:0];
    end
end

generate
    for (g = 0; g < 32; g = g + 1) begin : g_start
        localparam [32*OPT_MAX-1:0] LO = BACK_LO[32*OPT_MAX*g +: 32*OPT_MAX];
        localparam [32*OPT_MAX-1:0] HI = START_HI[32*OPT_MAX*g +: 32*OPT_MAX];
        reg [31:0] lo_row, hi_row;   // row g of the chosen matrices
        integer o;
        always @* begin
            lo_row = 32'd0;
            hi_row = 32'd0;
            for (o = 0; o < OPT_MAX; o = o + 1) begin
                lo_row = lo_row | (LO[32*o +: 32] & {32{lead_lo_hot[o]}});
                hi_row = hi_row | (HI[32*o +: 32] & {32{lead_hi_hot[o]}});
            end
        end
        assign s2_start_next[g] = ^(s1_r0_reg & lo_row);
        assign start_hi[g] = ^(s2_start_reg & hi_row);
    end
endgenerate

wire [31:0] s3_term_next = s2_first_reg ? s2_d_reg ^ start_hi : s2_d_reg;

// --- r: the CRC register ----------------------------------------------------

reg [31:0]      r_reg, r_next;
reg [CNT_W-1:0] r_trail_reg, r_trail_next;   // t of the last beat that changed r
reg             r_done_reg = 1'b0;           // r holds a segment's end
reg [ID_W-1:0]  r_id_reg;

always @* begin
    r_next = r_reg;
    r_trail_next = r_trail_reg;
    if (s3_upd_reg) begin
        r_next = (s3_first_reg ? 32'd0 : mat_mul(WORD_MAT, r_reg)) ^ s3_term_reg;
        r_trail_next = s3_trail_reg;
    end
end

// --- u1, out: trailing null octets, final XOR, result FIFO ------------------

reg             u1_valid_reg = 1'b0;
reg [ID_W-1:0]  u1_id_reg;
reg [31:0]      u1_r_reg;
reg [HI_W-1:0]  u1_trail_hi_reg;

reg  [OPT_MAX-1:0] trail_lo_hot, trail_hi_hot;   // t mod 8, t div 8, one-hot
wire [31:0]        u1_r_next;
wire [31:0]        out_crc;

integer ts;

always @* begin
    for (ts = 0; ts < OPT_MAX; ts = ts + 1) begin
        trail_lo_hot[ts] = ts < 8 && r_trail_reg[2:0] == ts[2:0];
        trail_hi_hot[ts] = ts < HI_N - 1 && u1_trail_hi_reg == ts[HI_W-1:0];
    end
end

generate
    for (g = 0; g < 32; g = g + 1) begin : g_trail
        localparam [32*OPT_MAX-1:0] LO = BACK_LO[32*OPT_MAX*g +: 32*OPT_MAX];
        localparam [32*OPT_MAX-1:0] HI = BACK_HI[32*OPT_MAX*g +: 32*OPT_MAX];
        reg [31:0] lo_row, hi_row;   // row g of the chosen matrices
        integer o;
        always @* begin
            lo_row = 32'd0;
            hi_row = 32'd0;
            for (o = 0; o < OPT_MAX; o = o + 1) begin
                lo_row = lo_row | (LO[32*o +: 32] & {32{trail_lo_hot[o]}});
                hi_row = hi_row | (HI[32*o +: 32] & {32{trail_hi_hot[o]}});
            end
        end
        assign u1_r_next[g] = ^(r_reg & lo_row);
        assign out_crc[g] = ~^(u1_r_reg & hi_row);
    end
endgenerate

reg [ID_W+31:0] out_mem [0:OUT_DEPTH-1];
reg [OUT_AW:0]  out_wr_ptr_reg = {OUT_AW+1{1'b0}}, out_wr_ptr_next;
reg [OUT_AW:0]  out_rd_ptr_reg = {OUT_AW+1{1'b0}}, out_rd_ptr_next;
reg [OUT_AW:0]  pending_reg = {OUT_AW+1{1'b0}}, pending_next;

wire [ID_W+31:0] out_word = out_mem[out_rd_ptr_reg[OUT_AW-1:0]];

assign m_axis_crc_tvalid = out_wr_ptr_reg != out_rd_ptr_reg;
assign m_axis_crc_tdata = out_word[31:0];
assign m_axis_crc_tid = out_word[ID_W+31:32];

always @* begin
    out_wr_ptr_next = out_wr_ptr_reg + {{OUT_AW{1'b0}}, u1_valid_reg};
    out_rd_ptr_next = out_rd_ptr_reg
        + {{OUT_AW{1'b0}}, m_axis_crc_tvalid && m_axis_crc_tready};
    // Every accepted tlast beat is a result that will need a FIFO entry.
    pending_next = pending_reg
        + {{OUT_AW{1'b0}}, s_accept && s_axis_tlast}
        - {{OUT_AW{1'b0}}, m_axis_crc_tvalid && m_axis_crc_tready};
    // (pending_next < OUT_DEPTH, from pending_reg's flags and the two
    // steps rather than from the sum: the ready is one LUT behind them.)
    s_axis_tready_next = (s_accept && s_axis_tlast && !(m_axis_crc_tvalid && m_axis_crc_tready))
                       ? pending_reg < OUT_DEPTH - 1 || pending_reg == {OUT_AW+1{1'b1}}
                       : (!(s_accept && s_axis_tlast) && m_axis_crc_tvalid && m_axis_crc_tready)
                       ? pending_reg != {OUT_AW+1{1'b0}} && pending_reg <= OUT_DEPTH
                       : pending_reg < OUT_DEPTH;
end

// --- registers --------------------------------------------------------------

always @(posedge clk) begin
    s_axis_tready_reg <= s_axis_tready_next;

    s0_valid_reg <= s_accept;
    s0_data_reg <= s_axis_tdata;
    s0_keep_reg <= s_axis_tkeep;
    s0_last_reg <= s_axis_tlast;
    s0_id_reg <= s_axis_tid;
    s0_user_reg <= s_axis_tuser;

    seg_start_reg <= seg_start_next;
    seg_none_reg <= seg_none_next;
    seg_r0_reg <= seg_r0_next;

    s1_valid_reg <= s0_valid_reg;
    s1_upd_reg <= s0_upd;
    s1_first_reg <= s0_first;
    s1_last_reg <= s0_last_reg;
    s1_id_reg <= s0_id_reg;
    s1_d_reg <= d_term;
    s1_r0_reg <= s0_r0;
    s1_lead_reg <= s0_lead;
    s1_trail_reg <= s0_trail;

    s2_valid_reg <= s1_valid_reg;
    s2_upd_reg <= s1_upd_reg;
    s2_first_reg <= s1_first_reg;
    s2_last_reg <= s1_last_reg;
    s2_id_reg <= s1_id_reg;
    s2_d_reg <= s1_d_reg;
    s2_start_reg <= s2_start_next;
    s2_lead_hi_reg <= s1_lead_reg[CNT_W-1:3];
    s2_trail_reg <= s1_trail_reg;

    s3_valid_reg <= s2_valid_reg;
    s3_upd_reg <= s2_upd_reg;
    s3_first_reg <= s2_first_reg;
    s3_last_reg <= s2_last_reg;
    s3_id_reg <= s2_id_reg;
    s3_term_reg <= s3_term_next;
    s3_trail_reg <= s2_trail_reg;

    r_reg <= r_next;
    r_trail_reg <= r_trail_next;
    r_done_reg <= s3_valid_reg && s3_last_reg;
    r_id_reg <= s3_id_reg;

    u1_valid_reg <= r_done_reg;
    u1_id_reg <= r_id_reg;
    u1_r_reg <= u1_r_next;
    u1_trail_hi_reg <= r_trail_reg[CNT_W-1:3];

    if (u1_valid_reg) begin
        out_mem[out_wr_ptr_reg[OUT_AW-1:0]] <= {u1_id_reg, out_crc};
    end
    out_wr_ptr_reg <= out_wr_ptr_next;
    out_rd_ptr_reg <= out_rd_ptr_next;
    pending_reg <= pending_next;

    if (rst) begin
        s_axis_tready_reg <= 1'b0;
        s0_valid_reg <= 1'b0;
        seg_start_reg <= 1'b1;
        seg_none_reg <= 1'b1;
        s1_valid_reg <= 1'b0;
        s1_upd_reg <= 1'b0;
        s2_valid_reg <= 1'b0;
        s2_upd_reg <= 1'b0;
        s3_valid_reg <= 1'b0;
        s3_upd_reg <= 1'b0;
        r_done_reg <= 1'b0;
        u1_valid_reg <= 1'b0;
        out_wr_ptr_reg <= {OUT_AW+1{1'b0}};
        out_rd_ptr_reg <= {OUT_AW+1{1'b0}};
        pending_reg <= {OUT_AW+1{1'b0}};
    end
end

endmodule

`resetall
