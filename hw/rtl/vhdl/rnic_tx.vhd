-- rnic_tx: the iWARP transmit datapath, RDMAP messages in, MPA or TUF FPDUs
-- out, DATA_W bits per clock: ddp_tx (DDP/RDMAP headers, MULPDU
-- segmentation), then each segment to mpa_tx (ULPDU_Length, pad, markers,
-- CRC32c) or tuf_tx (TUF header with the connection's key, CRC32c trailer;
-- docs/tuf.md) by its connection's mode.
--
--   s_desc -> desc reg -+-> ddp_tx --> skid --> demux -+-> mpa_tx -+-> merge -> m_axis
--            flag table +                         |    +-> tuf_tx -+   ^
--   s_axis (payload) ------^                      +-> order queue -----+
--   DDP segments: tuser tuf & crc_en & mrk_en & conn & len
--
-- VHDL-2008 twin of hw/rtl/rnic_tx.v: same generics, same ports, same
-- registers and clock counts, so tests/rnic_tx/test_rnic_tx.py drives both
-- (the Verilog header has the interface in full). In brief:
--
-- Connections. A descriptor names its connection (s_desc_conn); the rest
-- is configured once through cfg_*: cfg_tuf, the mode (0 MPA, 1 TUF);
-- cfg_key, the connection's 48-bit TUF key (tuf_tx's key table); cfg_pos,
-- the marker position as mpa_tx's; cfg_mrk_en, markers; cfg_crc_en, MPA's
-- CRC (the last three MPA only). A write (cfg_valid and cfg_ready) sets all
-- five. The three flags live in a per-connection table (sdp_ram, 3 bits a
-- connection) read when a descriptor is taken, and travel with the message
-- as the top three bits of ddp_tx's ctx. Configure a connection while it
-- has nothing in flight, and before its first descriptor; a connection may
-- change mode so between messages. cfg_ready is low only in a clock where
-- mpa_tx updates its marker table (an FPDU's end).
--
-- Descriptor, s_desc: ddp_tx's fields and conn in place of ctx. mulpdu is
-- the caller's: for MPA at most 64768 (RFC 5044 3; longer: mpa_err code
-- 1, lost); for TUF at most EMSS - 12 (tuf.MaxULPDU; tuf_tx refuses only
-- over 65531 octets, tuf_err code 1, lost). s_desc_ready depends on
-- registers only.
--
-- Payload, s_axis: as ddp_tx's.
--
-- Demultiplexer and merge: a segment's first beat picks the block by its
-- tuf bit and pushes the choice on a 32-deep order queue (not for a
-- segment the block will drop); the merge takes whole frames from the
-- block the head names and pops it at tlast, so m_axis keeps the order in
-- which segments left ddp_tx.
--
-- Output, m_axis: one frame per FPDU, lane-0 aligned, tkeep all ones but
-- in the last beat; tuser = conn. Frames of one connection come in
-- message and segment order; connections interleave at FPDU boundaries,
-- in descriptor order.
--
-- Errors: ddp_err_* are ddp_tx's err_* with the message's connection;
-- mpa_err_* are mpa_tx's err_* and tuf_err_* tuf_tx's (bit 0: a segment
-- too long for the framer, dropped; bit 1 cannot happen behind ddp_tx).
--
-- Throughput: one output beat per clock with descriptors and payload back
-- to back and an always-ready sink, in either mode. Latency: 25 clocks for
-- MPA, 23 for TUF, at every width, from the edge that accepts a descriptor
-- to the edge where its first FPDU beat can be taken (idle datapath).
--
-- Verification: tests/rnic_tx/test_rnic_tx.py, every expected octet from
-- the Go stack through cmd/rnic-oracle (rdmap_segments, then mpa_fpdus or
-- tuf_frames).

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity rnic_tx is
    generic (
        DATA_W : natural := 64;
        CONN_W : natural := 10
    );
    port (
        clk                 : in  std_logic := '0';
        rst                 : in  std_logic := '0';

        s_desc_valid        : in  std_logic := '0';
        s_desc_ready        : out std_logic;
        s_desc_opcode       : in  std_logic_vector(3 downto 0) := (others => '0');
        s_desc_stag         : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_to           : in  std_logic_vector(63 downto 0) := (others => '0');
        s_desc_msn          : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_inv_stag     : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_len          : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_rr_sink_stag : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_rr_sink_to   : in  std_logic_vector(63 downto 0) := (others => '0');
        s_desc_rr_size      : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_rr_src_stag  : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_rr_src_to    : in  std_logic_vector(63 downto 0) := (others => '0');
        s_desc_mulpdu       : in  std_logic_vector(15 downto 0) := (others => '0');
        s_desc_conn         : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');

        s_axis_tdata        : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_axis_tkeep        : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s_axis_tvalid       : in  std_logic := '0';
        s_axis_tready       : out std_logic;
        s_axis_tlast        : in  std_logic := '0';

        cfg_valid           : in  std_logic := '0';
        cfg_ready           : out std_logic;
        cfg_conn            : in  std_logic_vector(CONN_W - 1 downto 0) := (others => '0');
        cfg_pos             : in  std_logic_vector(6 downto 0) := (others => '0');
        cfg_mrk_en          : in  std_logic := '0';
        cfg_crc_en          : in  std_logic := '0';
        cfg_tuf             : in  std_logic := '0';
        cfg_key             : in  std_logic_vector(47 downto 0) := (others => '0');

        m_axis_tdata        : out std_logic_vector(DATA_W - 1 downto 0);
        m_axis_tkeep        : out std_logic_vector(DATA_W / 8 - 1 downto 0);
        m_axis_tvalid       : out std_logic;
        m_axis_tready       : in  std_logic := '0';
        m_axis_tlast        : out std_logic;
        m_axis_tuser        : out std_logic_vector(CONN_W - 1 downto 0);

        ddp_err_valid       : out std_logic;
        ddp_err_code        : out std_logic_vector(3 downto 0);
        ddp_err_conn        : out std_logic_vector(CONN_W - 1 downto 0);

        mpa_err_valid       : out std_logic;
        mpa_err_code        : out std_logic_vector(1 downto 0);

        tuf_err_valid       : out std_logic;
        tuf_err_code        : out std_logic_vector(1 downto 0)
    );
end entity rnic_tx;

architecture rtl of rnic_tx is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "rnic_tx: DATA_W must be 64, 128, 256 or 512, got "
                & integer'image(DATA_W)
            severity failure;
        assert CONN_W >= 1
            report "rnic_tx: CONN_W must be at least 1, got " & integer'image(CONN_W)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant L_c     : positive := DATA_W / 8;
    constant CTX_W_c : positive := CONN_W + 3;   -- tuf & crc_en & mrk_en & conn: mpa_tx's tuser above len, and the mode
    constant ORD_AW_c : positive := 5;           -- the order queue holds 2**ORD_AW_c frames
    constant MPA_MAX_c : natural := 64768;       -- mpa_tx drops longer ULPDUs (its err bit 0)
    constant TUF_MAX_c : natural := 65531;       -- tuf_tx drops longer ULPDUs (its err bit 0)

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(L_c - 1 downto 0);
    subtype conn_t is std_ulogic_vector(CONN_W - 1 downto 0);
    subtype ctx_t is std_ulogic_vector(CTX_W_c - 1 downto 0);
    subtype w32_t is std_ulogic_vector(31 downto 0);
    subtype w64_t is std_ulogic_vector(63 downto 0);

    -- --- descriptor register, and the flag table read for it -----------------

    signal d_valid_reg : std_ulogic := '0';
    signal d_valid_next : std_ulogic := '0';
    signal d_opcode : std_ulogic_vector(3 downto 0) := (others => '0');
    signal d_stag : w32_t := (others => '0');
    signal d_to : w64_t := (others => '0');
    signal d_msn : w32_t := (others => '0');
    signal d_inv_stag : w32_t := (others => '0');
    signal d_len : w32_t := (others => '0');
    signal d_rr_sink_stag : w32_t := (others => '0');
    signal d_rr_sink_to : w64_t := (others => '0');
    signal d_rr_size : w32_t := (others => '0');
    signal d_rr_src_stag : w32_t := (others => '0');
    signal d_rr_src_to : w64_t := (others => '0');
    signal d_mulpdu : std_ulogic_vector(15 downto 0) := (others => '0');
    signal d_conn : conn_t := (others => '0');

    signal ddp_desc_ready : std_ulogic := '0';
    signal s_ready : std_ulogic := '0';
    signal d_load : std_ulogic := '0';

    signal mpa_cfg_ready : std_ulogic := '0';
    signal flag_we : std_ulogic := '0';
    signal flag_wdata : std_ulogic_vector(2 downto 0) := (others => '0');
    signal d_flags : std_ulogic_vector(2 downto 0) := (others => '0');
    signal d_ctx : ctx_t := (others => '0');

    -- --- DDP/RDMAP segments ------------------------------------------------------

    signal seg_data : data_t := (others => '0');
    signal seg_keep : keep_t := (others => '0');
    signal seg_valid, seg_ready, seg_last : std_ulogic := '0';
    -- tuf & crc_en & mrk_en & conn & ulpdu_len
    signal seg_user : std_ulogic_vector(CTX_W_c + 15 downto 0) := (others => '0');
    signal ddp_err_ctx : ctx_t := (others => '0');

    -- --- skid buffer: ddp_tx's m_axis_tready from a register ----------------------

    -- The top bit: the framer the segment goes to will drop it (its length
    -- check, err bit 0), from ddp_tx's output registers.
    constant SK_W_c : natural := DATA_W + L_c + 1 + CTX_W_c + 16 + 1;

    subtype sk_t is std_ulogic_vector(SK_W_c - 1 downto 0);

    signal sk_s_ready_reg : std_ulogic := '0';
    signal sk_s_ready_next : std_ulogic := '0';
    signal sk_m_valid_reg : std_ulogic := '0';
    signal sk_m_valid_next : std_ulogic := '0';
    signal sk_t_valid_reg : std_ulogic := '0';
    signal sk_t_valid_next : std_ulogic := '0';
    signal sk_m_reg, sk_t_reg : sk_t := (others => '0');
    signal sk_in_to_out, sk_in_to_tmp, sk_tmp_to_out : std_ulogic := '0';
    signal dm_ready : std_ulogic := '0';   -- the demultiplexer takes sk_m_reg's beat
    signal sk_in : sk_t := (others => '0');
    signal seg_drop : std_ulogic := '0';

    -- --- demultiplexer ----------------------------------------------------------------

    signal dm_user : std_ulogic_vector(CTX_W_c + 15 downto 0) := (others => '0');
    signal dm_last : std_ulogic := '0';
    signal dm_in_seg : std_ulogic := '0';
    signal dm_route_reg : std_ulogic := '0';
    signal dm_first, dm_route, dm_drop, dm_hold, dm_take : std_ulogic := '0';
    signal mpa_s_ready, tuf_s_ready, mpa_s_valid, tuf_s_valid : std_ulogic := '0';

    -- --- the two framers and the merge -----------------------------------------------

    signal mpa_data, tuf_data : data_t := (others => '0');
    signal mpa_keep, tuf_keep : keep_t := (others => '0');
    signal mpa_valid, tuf_valid, mpa_last, tuf_last : std_ulogic := '0';
    signal mpa_ready, tuf_ready : std_ulogic := '0';
    signal mpa_user, tuf_user : conn_t := (others => '0');
    signal tuf_cfg_ready_unused : std_ulogic := '0';

    signal ord_mem : std_ulogic_vector(2 ** ORD_AW_c - 1 downto 0) := (others => '0');
    signal ord_wr, ord_rd, ord_wr_next, ord_rd_next : unsigned(ORD_AW_c - 1 downto 0) := (others => '0');
    signal ord_empty : std_ulogic := '1';
    signal ord_full, ord_head, ord_push, ord_pop : std_ulogic := '0';
    signal m_valid, m_last : std_ulogic := '0';

begin

    -- --- descriptor register, and the flag table read for it -----------------

    s_ready <= (not d_valid_reg) or ddp_desc_ready;
    s_desc_ready <= s_ready;
    d_load <= s_desc_valid and s_ready;

    p_d : process (all) is
        variable v : std_ulogic;
    begin
        v := d_valid_reg;
        if ddp_desc_ready = '1' then
            v := '0';
        end if;
        if d_load = '1' then
            v := '1';
        end if;
        d_valid_next <= v;
    end process p_d;

    p_d_reg : process (clk) is
    begin
        if rising_edge(clk) then
            d_valid_reg <= d_valid_next;
            if d_load = '1' then
                d_opcode <= s_desc_opcode;
                d_stag <= s_desc_stag;
                d_to <= s_desc_to;
                d_msn <= s_desc_msn;
                d_inv_stag <= s_desc_inv_stag;
                d_len <= s_desc_len;
                d_rr_sink_stag <= s_desc_rr_sink_stag;
                d_rr_sink_to <= s_desc_rr_sink_to;
                d_rr_size <= s_desc_rr_size;
                d_rr_src_stag <= s_desc_rr_src_stag;
                d_rr_src_to <= s_desc_rr_src_to;
                d_mulpdu <= s_desc_mulpdu;
                d_conn <= s_desc_conn;
            end if;
            if rst = '1' then
                d_valid_reg <= '0';
            end if;
        end if;
    end process p_d_reg;

    -- tuf & crc_en & mrk_en per connection, read at the edge that loads the
    -- descriptor register, so the word sits next to the descriptor.
    cfg_ready <= mpa_cfg_ready;
    flag_we <= cfg_valid and mpa_cfg_ready;
    flag_wdata <= cfg_tuf & cfg_crc_en & cfg_mrk_en;

    flag_table : entity work.sdp_ram
        generic map (WIDTH => 3, ADDR_W => CONN_W)
        port map (
            clk => clk,
            wr_en => flag_we,
            wr_addr => cfg_conn,
            wr_data => flag_wdata,
            rd_en => d_load,
            rd_addr => s_desc_conn,
            rd_data => d_flags
        );

    -- --- DDP/RDMAP segments ------------------------------------------------------

    d_ctx <= d_flags & d_conn;

    ddp : entity work.ddp_tx
        generic map (DATA_W => DATA_W, CTX_W => CTX_W_c)
        port map (
            clk => clk, rst => rst,
            s_desc_valid => d_valid_reg, s_desc_ready => ddp_desc_ready,
            s_desc_opcode => d_opcode, s_desc_stag => d_stag, s_desc_to => d_to,
            s_desc_msn => d_msn, s_desc_inv_stag => d_inv_stag, s_desc_len => d_len,
            s_desc_rr_sink_stag => d_rr_sink_stag, s_desc_rr_sink_to => d_rr_sink_to,
            s_desc_rr_size => d_rr_size, s_desc_rr_src_stag => d_rr_src_stag,
            s_desc_rr_src_to => d_rr_src_to, s_desc_mulpdu => d_mulpdu,
            s_desc_ctx => d_ctx,
            s_axis_tdata => s_axis_tdata, s_axis_tkeep => s_axis_tkeep,
            s_axis_tvalid => s_axis_tvalid, s_axis_tready => s_axis_tready,
            s_axis_tlast => s_axis_tlast,
            m_axis_tdata => seg_data, m_axis_tkeep => seg_keep, m_axis_tvalid => seg_valid,
            m_axis_tready => seg_ready, m_axis_tlast => seg_last, m_axis_tuser => seg_user,
            err_valid => ddp_err_valid, err_code => ddp_err_code, err_ctx => ddp_err_ctx
        );

    -- (The flags in ddp_err_ctx's top three bits are not used.)
    ddp_err_conn <= ddp_err_ctx(CONN_W - 1 downto 0);

    -- --- skid buffer: ddp_tx's m_axis_tready from a register ----------------------

    -- mpa_tx's s_axis_tready comes through its stages' handshakes (frame,
    -- mark, the CRC FIFO), and ddp_tx's m_axis_tready fans out into the
    -- stall logic of its whole pipeline; joined, the two make a path longer
    -- than either block's own. Two registers of a segment beat each (output
    -- and skid), s_ready registered: one beat per clock, one clock of
    -- latency.
    seg_ready <= sk_s_ready_reg;
    seg_drop <= '1' when unsigned(seg_user(15 downto 0)) = 0
                         or (seg_user(CTX_W_c + 15) = '1' and to_integer(unsigned(seg_user(15 downto 0))) > TUF_MAX_c)
                         or (seg_user(CTX_W_c + 15) = '0' and to_integer(unsigned(seg_user(15 downto 0))) > MPA_MAX_c)
                else '0';
    sk_in <= seg_drop & seg_user & seg_last & seg_keep & seg_data;

    p_sk : process (all) is
        variable mv, tv : std_ulogic;
    begin
        mv := sk_m_valid_reg;
        tv := sk_t_valid_reg;
        sk_in_to_out <= '0';
        sk_in_to_tmp <= '0';
        sk_tmp_to_out <= '0';
        -- Ready next clock if the output moves on, or if the skid register
        -- stays empty (nothing comes in now, or the output is free).
        sk_s_ready_next <= dm_ready
                           or ((not sk_t_valid_reg) and ((not sk_m_valid_reg) or (not seg_valid)));
        if sk_s_ready_reg = '1' then
            if dm_ready = '1' or sk_m_valid_reg = '0' then
                mv := seg_valid;
                sk_in_to_out <= '1';
            else
                tv := seg_valid;
                sk_in_to_tmp <= '1';
            end if;
        elsif dm_ready = '1' then
            mv := sk_t_valid_reg;
            tv := '0';
            sk_tmp_to_out <= '1';
        end if;
        sk_m_valid_next <= mv;
        sk_t_valid_next <= tv;
    end process p_sk;

    p_sk_reg : process (clk) is
    begin
        if rising_edge(clk) then
            sk_s_ready_reg <= sk_s_ready_next;
            sk_m_valid_reg <= sk_m_valid_next;
            sk_t_valid_reg <= sk_t_valid_next;
            if sk_in_to_out = '1' then
                sk_m_reg <= sk_in;
            elsif sk_tmp_to_out = '1' then
                sk_m_reg <= sk_t_reg;
            end if;
            if sk_in_to_tmp = '1' then
                sk_t_reg <= sk_in;
            end if;
            if rst = '1' then
                sk_s_ready_reg <= '0';
                sk_m_valid_reg <= '0';
                sk_t_valid_reg <= '0';
            end if;
        end if;
    end process p_sk_reg;

    -- --- demultiplexer: each segment, whole, to mpa_tx or tuf_tx by its mode ----
    --
    -- A segment's first beat picks the block by its tuf bit, held for its
    -- other beats. The first beat also pushes the block's number on the
    -- order queue, unless the block will drop the segment (its length
    -- check, err bit 0: no frame comes out for it); with the queue full the
    -- first beat waits.

    dm_user <= sk_m_reg(DATA_W + L_c + CTX_W_c + 16 downto DATA_W + L_c + 1);
    dm_last <= sk_m_reg(DATA_W + L_c);
    dm_first <= not dm_in_seg;
    dm_route <= dm_route_reg when dm_in_seg = '1' else dm_user(CTX_W_c + 15);
    dm_drop <= sk_m_reg(SK_W_c - 1);
    dm_hold <= dm_first and (not dm_drop) and ord_full;
    mpa_s_valid <= sk_m_valid_reg and (not dm_route) and (not dm_hold);
    tuf_s_valid <= sk_m_valid_reg and dm_route and (not dm_hold);
    dm_ready <= (not dm_hold) and ((dm_route and tuf_s_ready) or ((not dm_route) and mpa_s_ready));
    dm_take <= sk_m_valid_reg and dm_ready;
    ord_push <= dm_take and dm_first and (not dm_drop);

    p_dm_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if dm_take = '1' then
                dm_in_seg <= not dm_last;
                if dm_first = '1' then
                    dm_route_reg <= dm_user(CTX_W_c + 15);
                end if;
            end if;
            if rst = '1' then
                dm_in_seg <= '0';
            end if;
        end if;
    end process p_dm_reg;

    -- --- MPA framing, markers, CRC ---------------------------------------------------

    mpa : entity work.mpa_tx
        generic map (DATA_W => DATA_W, CONN_W => CONN_W)
        port map (
            clk => clk, rst => rst,
            s_axis_tdata => sk_m_reg(DATA_W - 1 downto 0),
            s_axis_tkeep => sk_m_reg(DATA_W + L_c - 1 downto DATA_W),
            s_axis_tvalid => mpa_s_valid, s_axis_tready => mpa_s_ready,
            s_axis_tlast => dm_last,
            s_axis_tuser => dm_user(CTX_W_c + 14 downto 0),
            cfg_valid => cfg_valid, cfg_ready => mpa_cfg_ready, cfg_conn => cfg_conn,
            cfg_pos => cfg_pos,
            m_axis_tdata => mpa_data, m_axis_tkeep => mpa_keep,
            m_axis_tvalid => mpa_valid, m_axis_tready => mpa_ready,
            m_axis_tlast => mpa_last, m_axis_tuser => mpa_user,
            err_valid => mpa_err_valid, err_code => mpa_err_code
        );

    -- --- TUF framing: header with the key, CRC32c trailer -----------------------------

    tuf : entity work.tuf_tx
        generic map (DATA_W => DATA_W, CONN_W => CONN_W)
        port map (
            clk => clk, rst => rst,
            s_axis_tdata => sk_m_reg(DATA_W - 1 downto 0),
            s_axis_tkeep => sk_m_reg(DATA_W + L_c - 1 downto DATA_W),
            s_axis_tvalid => tuf_s_valid, s_axis_tready => tuf_s_ready,
            s_axis_tlast => dm_last,
            s_axis_tuser => dm_user(CONN_W + 15 downto 0),
            cfg_valid => flag_we, cfg_ready => tuf_cfg_ready_unused, cfg_conn => cfg_conn,
            cfg_key => cfg_key,
            m_axis_tdata => tuf_data, m_axis_tkeep => tuf_keep,
            m_axis_tvalid => tuf_valid, m_axis_tready => tuf_ready,
            m_axis_tlast => tuf_last, m_axis_tuser => tuf_user,
            err_valid => tuf_err_valid, err_code => tuf_err_code
        );

    -- --- order queue and merge: whole frames, in the order segments went in ------
    --
    -- One bit a frame ('1': tuf_tx's), pushed by the demultiplexer, popped
    -- at the end of each output frame. The head picks the block m_axis
    -- takes from; the head's frame is always the oldest in either block, so
    -- it can always finish, and a block's frames come out in the order they
    -- went in.

    -- Head, empty and full are registers, from the next pointers.
    ord_pop <= m_valid and m_axis_tready and m_last;
    ord_wr_next <= ord_wr + 1 when ord_push = '1' else ord_wr;
    ord_rd_next <= ord_rd + 1 when ord_pop = '1' else ord_rd;

    p_ord_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if ord_push = '1' then
                ord_mem(to_integer(ord_wr)) <= dm_route;
            end if;
            ord_wr <= ord_wr_next;
            ord_rd <= ord_rd_next;
            if ord_push = '1' and ord_wr = ord_rd_next then
                ord_head <= dm_route;
            else
                ord_head <= ord_mem(to_integer(ord_rd_next));
            end if;
            if ord_push /= ord_pop then
                if ord_wr_next = ord_rd_next then
                    ord_empty <= ord_pop;
                    ord_full <= ord_push;
                else
                    ord_empty <= '0';
                    ord_full <= '0';
                end if;
            end if;
            if rst = '1' then
                ord_wr <= (others => '0');
                ord_rd <= (others => '0');
                ord_empty <= '1';
                ord_full <= '0';
            end if;
        end if;
    end process p_ord_reg;

    mpa_ready <= m_axis_tready and (not ord_empty) and (not ord_head);
    tuf_ready <= m_axis_tready and (not ord_empty) and ord_head;
    m_valid <= (not ord_empty) and ((ord_head and tuf_valid) or ((not ord_head) and mpa_valid));
    m_last <= tuf_last when ord_head = '1' else mpa_last;
    m_axis_tvalid <= m_valid;
    m_axis_tlast <= m_last;
    m_axis_tdata <= tuf_data when ord_head = '1' else mpa_data;
    m_axis_tkeep <= tuf_keep when ord_head = '1' else mpa_keep;
    m_axis_tuser <= tuf_user when ord_head = '1' else mpa_user;

end architecture rtl;
