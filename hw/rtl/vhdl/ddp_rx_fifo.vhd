-- ddp_rx_fifo: small first-word-fall-through FIFO in registers, 2**AW words
-- of WIDTH bits, for ddp_rx's queues.
--
-- VHDL-2008 twin of hw/rtl/ddp_rx_fifo.v: same generics, same ports, same
-- registers and timing (the Verilog header has the details). In brief:
-- in_ready is registered (not full); out_valid is registered (not empty). A
-- second word may be pushed in the same clock behind the first (in_valid2
-- with in_valid, when in_ready2: two words free, also registered); tie
-- in_valid2 low where one a clock is enough. A push into a full FIFO waits
-- for in_ready. Latency: a word pushed at one edge is at the output from
-- that edge on. Throughput: one or two words in and one out per clock. The
-- words start at zero in simulation.
--
-- out_data is a register (head_reg): the oldest word, loaded from the
-- words behind it (mem) or, when there are none, straight from in_data. So
-- the logic behind the FIFO starts at a register rather than at a 2**AW-way
-- read mux. mem holds the count - 1 words behind the head, never more than
-- 2**AW - 1.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity ddp_rx_fifo is
    generic (
        WIDTH : natural := 8;
        AW    : natural := 2
    );
    port (
        clk       : in  std_logic := '0';
        rst       : in  std_logic := '0';

        in_data   : in  std_logic_vector(WIDTH - 1 downto 0) := (others => '0');
        in_valid  : in  std_logic := '0';
        in_ready  : out std_logic := '1';
        in_data2  : in  std_logic_vector(WIDTH - 1 downto 0) := (others => '0');
        in_valid2 : in  std_logic := '0';
        in_ready2 : out std_logic := '1';

        out_data  : out std_logic_vector(WIDTH - 1 downto 0) := (others => '0');
        out_valid : out std_logic := '0';
        out_ready : in  std_logic := '0'
    );
end entity ddp_rx_fifo;

architecture rtl of ddp_rx_fifo is

    function check_generics return boolean is
    begin
        assert AW >= 1 and AW <= 8
            report "ddp_rx_fifo: AW must be 1..8, got " & integer'image(AW)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant DEPTH_c : positive := 2 ** AW;

    subtype word_t is std_ulogic_vector(WIDTH - 1 downto 0);
    subtype ptr_t is unsigned(AW - 1 downto 0);
    subtype cnt_t is unsigned(AW downto 0);
    type mem_t is array (0 to DEPTH_c - 1) of word_t;

    constant DEPTH_AW_c : cnt_t := to_unsigned(DEPTH_c, AW + 1);
    constant DEPTH_M2_c : cnt_t := to_unsigned(DEPTH_c - 2, AW + 1);

    signal mem : mem_t := (others => (others => '0'));
    signal head_reg : word_t := (others => '0');       -- the oldest word (valid when not empty)
    signal wr_ptr_reg : ptr_t := (others => '0');
    signal rd_ptr_reg : ptr_t := (others => '0');
    signal count_reg : cnt_t := (others => '0');
    signal count_next : cnt_t := (others => '0');
    signal full_reg : std_ulogic := '0';                -- count = DEPTH
    signal room2_reg : std_ulogic := '1';               -- count <= DEPTH - 2
    signal empty_reg : std_ulogic := '1';
    signal mem_ne_reg : std_ulogic := '0';              -- count >= 2: a word behind the head

    signal wr_ptr1 : ptr_t := (others => '0');
    signal push, push2, pop : std_ulogic := '0';
    signal head_load, in_to_head, mem_w1, mem_w2 : std_ulogic := '0';

    function u1(b : std_ulogic; w : natural) return unsigned is
        variable r : unsigned(w - 1 downto 0);
    begin
        r := (others => '0');
        r(0) := b;
        return r;
    end function u1;

begin

    wr_ptr1 <= wr_ptr_reg + 1;
    push <= in_valid and not full_reg;
    push2 <= push and in_valid2 and room2_reg;
    pop <= out_ready and not empty_reg;
    -- The head is (re)loaded when it is empty or taken: from mem when words
    -- wait there, else from in_data (and in_data2, if any, goes into mem).
    head_load <= empty_reg or pop;
    in_to_head <= head_load and not mem_ne_reg and push;
    mem_w1 <= push and not in_to_head;                 -- in_data into mem(wr)
    mem_w2 <= push2;                                   -- in_data2 behind it

    in_ready <= not full_reg;
    in_ready2 <= room2_reg;
    out_valid <= not empty_reg;
    out_data <= head_reg;

    count_next <= count_reg + u1(push, AW + 1) + u1(push2, AW + 1) - u1(pop, AW + 1);

    p_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if head_load = '1' and mem_ne_reg = '1' then
                head_reg <= mem(to_integer(rd_ptr_reg));
            elsif in_to_head = '1' then
                head_reg <= in_data;
            end if;
            if mem_w1 = '1' then
                mem(to_integer(wr_ptr_reg)) <= in_data;
            end if;
            if mem_w2 = '1' then
                if mem_w1 = '1' then
                    mem(to_integer(wr_ptr1)) <= in_data2;
                else
                    mem(to_integer(wr_ptr_reg)) <= in_data2;
                end if;
            end if;
            wr_ptr_reg <= wr_ptr_reg + u1(mem_w1, AW) + u1(mem_w2, AW);
            rd_ptr_reg <= rd_ptr_reg + u1(head_load and mem_ne_reg, AW);
            count_reg <= count_next;
            full_reg <= '1' when count_next = DEPTH_AW_c else '0';
            room2_reg <= '1' when count_next <= DEPTH_M2_c else '0';
            empty_reg <= '1' when count_next = 0 else '0';
            mem_ne_reg <= '1' when count_next > 1 else '0';
            if rst = '1' then
                wr_ptr_reg <= (others => '0');
                rd_ptr_reg <= (others => '0');
                count_reg <= (others => '0');
                full_reg <= '0';
                room2_reg <= '1';
                empty_reg <= '1';
                mem_ne_reg <= '0';
            end if;
        end if;
    end process p_reg;

end architecture rtl;
