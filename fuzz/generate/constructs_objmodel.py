"""Constructs over Python's object model, as Dynamo models user classes and functions.

Registered constructs (see ``fuzz.generate.registry``): metaclasses with
``__prepare__``/``__new__``/``__call__``, ``__init_subclass__`` and
``__class_getitem__``; descriptors (a property with a setter and a deleter,
a data descriptor with ``__set_name__``); ``__slots__``;
``__getattr__``/``__getattribute__``/``__setattr__``/``__delattr__``
overrides; ``super()`` in its forms (zero-argument, two-argument, in a
classmethod, along a diamond's MRO), class and static methods; exceptions
with their own ``__init__``, ``args`` and attributes; dataclasses (frozen,
``slots=True``, ``__post_init__``, ``field(default_factory=)``,
``dataclasses.replace``); ``enum``; ``typing.Protocol`` with
``runtime_checkable``, ABCs with ``register``; bound methods,
``types.MethodType``; a function's ``__defaults__``, ``__kwdefaults__`` and
``__code__`` rebound between calls. The classes are module-level helpers
(a class statement inside ``f`` is a graph break of its own), so Dynamo
traces their use: ``torch/_dynamo/variables/user_defined.py``,
``functions.py``, ``misc.py`` (super, methods, exceptions) and
``builder.py``.
"""

from __future__ import annotations

from fuzz.generate.prelude import helper, imported
from fuzz.generate.registry import StatementWriter, construct
from fuzz.generate.scope import Scope

_META = helper("Registry", '''
    class Registry(type):
        made = []

        @classmethod
        def __prepare__(mcs, name, bases, **kwargs):
            return {"tag": name.lower()}

        def __new__(mcs, name, bases, namespace, **kwargs):
            cls = super().__new__(mcs, name, bases, dict(namespace))
            Registry.made.append(name)
            return cls

        def __call__(cls, *args, **kwargs):
            obj = super().__call__(*args, **kwargs)
            obj.calls = len(Registry.made)
            return obj


    class Scaler(metaclass=Registry):
        def __init__(self, w, k=2):
            self.w = w
            self.k = k

        def apply(self, x):
            return torch.tanh(x * self.w + self.k)
''')
_PLUGIN = helper("Plugin", '''
    class Plugin:
        kinds = []

        def __init_subclass__(cls, scale=1.0, **kwargs):
            super().__init_subclass__(**kwargs)
            cls.scale = scale
            Plugin.kinds.append(cls.__name__)

        def __class_getitem__(cls, item):
            return (cls.__name__, item.__name__)

        def run(self, x):
            return x * self.scale


    class Half(Plugin, scale=0.5):
        pass


    class Quarter(Half, scale=0.25):
        def run(self, x):
            return super().run(x) + 0.25
''')
_HOLDER = helper("Holder", '''
    class Clamped:
        def __set_name__(self, owner, name):
            self.private = "_" + name

        def __get__(self, obj, objtype=None):
            if obj is None:
                return self
            return getattr(obj, self.private)

        def __set__(self, obj, value):
            setattr(obj, self.private, value.clamp(-1.0, 1.0))


    class Holder:
        w = Clamped()

        def __init__(self, w):
            self.w = w
            self._k = 1

        @property
        def k(self):
            return self._k

        @k.setter
        def k(self, value):
            self._k = value % 5

        @k.deleter
        def k(self):
            self._k = 0
''')
_SLOTTED = helper("Slotted", '''
    class Slotted:
        __slots__ = ("w", "k")

        def __init__(self, w, k):
            self.w = w
            self.k = k

        def scaled(self):
            return self.w * self.k * 0.25
''')
_ATTRS = helper("Watched", '''
    class Watched:
        def __init__(self, w):
            object.__setattr__(self, "log", [])
            self.w = w

        def __getattr__(self, name):
            self.log.append("miss:" + name)
            return 0.5

        def __setattr__(self, name, value):
            if name != "log":
                self.log.append("set:" + name)
            object.__setattr__(self, name, value)

        def __delattr__(self, name):
            self.log.append("del:" + name)
            object.__delattr__(self, name)


    class Counted:
        def __init__(self, w):
            self.w = w
            self.reads = 0

        def __getattribute__(self, name):
            if name == "w":
                object.__setattr__(self, "reads", object.__getattribute__(self, "reads") + 1)
            return object.__getattribute__(self, name)
''')
_SUPER = helper("Root", '''
    class Root:
        def __init__(self, w):
            self.w = w

        def apply(self, x):
            return x * 0.5

        @classmethod
        def make(cls, w):
            return cls(w)

        @staticmethod
        def shift(x):
            return x + 0.25


    class Left(Root):
        def apply(self, x):
            return torch.tanh(super().apply(x) + self.w)


    class Right(Root):
        def apply(self, x):
            return super(Right, self).apply(x) * 2

        @classmethod
        def make(cls, w):
            obj = super().make(w * 0.5)
            obj.made = cls.__name__
            return obj


    class Diamond(Left, Right):
        def apply(self, x):
            return super().apply(x) + Root.shift(x) * 0.1
''')
_FAULT = helper("Fault", '''
    class Fault(ValueError):
        def __init__(self, code, w):
            super().__init__("fault", code)
            self.code = code
            self.w = w


    class Retry(Fault):
        pass
''')
_DATACLASSES = helper("Frozen", '''
    @dataclasses.dataclass(frozen=True)
    class Frozen:
        w: torch.Tensor
        k: int = 2


    @dataclasses.dataclass(slots=True)
    class Slim:
        w: torch.Tensor
        k: int = 1
        seen: list = dataclasses.field(default_factory=list)
        scale: float = dataclasses.field(init=False, default=0.0)

        def __post_init__(self):
            self.scale = 0.25 * (self.k + 1)
            self.seen.append(self.k)
''', needs=("dataclasses",))
_ENUM = helper("Mode", '''
    class Mode(enum.Enum):
        SCALE = 1
        SHIFT = 2

        def apply(self, x):
            return x * 0.5 if self is Mode.SCALE else x + 0.5


    class Level(enum.IntEnum):
        LOW = 1
        HIGH = 3


    class Perm(enum.Flag):
        R = 1
        W = 2
        X = 4
''', needs=(imported("enum"),))
_PROTOCOLS = helper("Applies", '''
    @typing.runtime_checkable
    class Applies(typing.Protocol):
        def apply(self, x): ...


    class Op(abc.ABC):
        @abc.abstractmethod
        def apply(self, x): ...

        def twice(self, x):
            return self.apply(self.apply(x))


    class Neg(Op):
        def apply(self, x):
            return -x * 0.5


    class Duck:
        def apply(self, x):
            return torch.tanh(x)


    Op.register(Duck)
''', needs=("typing", imported("abc")))
_KNOB = helper("knob", '''
    def knob(x, k=2, *, s=0.5):
        return torch.tanh(x * k * s)


    def other_knob(x, k=2, *, s=0.5):
        return torch.tanh(x + k * s)


    KNOB_CODE = knob.__code__
''')


@construct("metaclass", weight=2, features={
    "metaclass": "a class made by a metaclass with __prepare__/__new__/__call__, instantiated in f",
})
def metaclass(w: StatementWriter, scope: Scope) -> None:
    """An instance of a metaclass-made class, its class attributes read."""
    w.features.update({"metaclass", "print"})
    w.need(_META)
    obj = w.fresh("obj")
    w.emit(scope, f"{obj} = Scaler({w.atom(scope)} * 0.5{w.pick(('', ', k=n', ', 1'))})")
    w.maybe_break(scope)
    w.put(scope, f"{obj}.apply({w.atom(scope)})", 1.0)
    w.emit(scope, f"print({obj}.calls, Scaler.tag, type(Scaler).__name__, type(Scaler) is Registry)")


@construct("init-subclass", weight=2, features={
    "init-subclass": "__init_subclass__ with class keywords, __class_getitem__, super() in a subclass method",
})
def init_subclass(w: StatementWriter, scope: Scope) -> None:
    """Subclasses configured by ``__init_subclass__``; a ``Plugin[...]`` subscript."""
    w.features.update({"init-subclass", "print"})
    w.need(_PLUGIN)
    cls = w.pick(("Half", "Quarter"))
    obj = w.fresh("plug")
    w.emit(scope, f"{obj} = {cls}()")
    w.maybe_break(scope, 0, 20)
    w.put(scope, f"({obj}.run({w.atom(scope)}) + {cls}.scale)", 3.0)
    w.emit(scope, f"print(Plugin[int], {cls}[str][0], Plugin.kinds, {obj}.scale)")


@construct("descriptor", weight=2, features={
    "descriptor": "a data descriptor with __set_name__ and a property with setter and deleter",
})
def descriptor(w: StatementWriter, scope: Scope) -> None:
    """A descriptor-backed attribute written and read; a property set and deleted."""
    w.features.update({"descriptor", "print"})
    w.need(_HOLDER)
    h = w.fresh("holder")
    w.emit(scope, f"{h} = Holder({w.atom(scope)})")
    w.emit(scope, f"{h}.k = n + {w.pick(scope.ints)}")
    w.maybe_break(scope)
    if w.chance(50):
        w.emit(scope, f"{h}.w = {w.atom(scope)} * 2")
    if w.chance(40):
        w.features.add("del")
        w.emit(scope, f"del {h}.k")
    w.put(scope, f"({h}.w * ({h}.k + 1) * 0.2)", 1.0)
    w.emit(scope, f"print({h}.k, type(Holder.w).__name__, Holder.w.private)")


@construct("slots", weight=2, features={
    "slots": "a __slots__ class: attribute writes, a write outside the slots caught as AttributeError",
})
def slots(w: StatementWriter, scope: Scope) -> None:
    """A slotted object mutated; maybe a write to a missing slot, caught."""
    w.features.add("slots")
    w.need(_SLOTTED)
    s = w.fresh("slim")
    w.emit(scope, f"{s} = Slotted({w.atom(scope)}, n)")
    w.emit(scope, f"{s}.k += 1")
    w.maybe_break(scope)
    if w.chance(50):
        w.features.update({"try-except", "print"})
        w.emit_block(scope, f"""
            try:
                {s}.extra = 1
            except AttributeError as e:
                print(type(e).__name__, "extra" in dir({s}))
        """)
    w.put(scope, f"{s}.scaled()", 5.0)


@construct("attr-overrides", weight=2, features={
    "attr-overrides": "__getattr__/__setattr__/__delattr__ and __getattribute__ overrides that log",
})
def attr_overrides(w: StatementWriter, scope: Scope) -> None:
    """Objects whose attribute hooks log each access; the logs printed."""
    w.features.update({"attr-overrides", "print"})
    w.need(_ATTRS)
    o = w.fresh("watched")
    if w.chance(50):
        w.emit(scope, f"{o} = Watched({w.atom(scope)})")
        w.emit(scope, f"{o}.k = n")
        w.maybe_break(scope)
        w.put(scope, f"({o}.w * {o}.k * {o}.missing)", 8.0)
        if w.chance(50):
            w.features.add("del")
            w.emit(scope, f"del {o}.k")
        w.emit(scope, f"print({o}.log)")
    else:
        w.emit(scope, f"{o} = Counted({w.atom(scope)})")
        w.put(scope, f"({o}.w * 0.5)", 2.0)
        w.maybe_break(scope)
        w.put(scope, f"({o}.w + {w.atom(scope)})", 8.0)
        w.emit(scope, f"print({o}.reads)")


@construct("super-forms", weight=2, features={
    "super-forms": "super() zero- and two-argument, in classmethods, along a diamond MRO; static methods",
})
def super_forms(w: StatementWriter, scope: Scope) -> None:
    """A method resolved through ``super()`` chains."""
    w.features.update({"super-forms", "print"})
    w.need(_SUPER)
    o = w.fresh("node")
    form = w.pick(("diamond", "classmethod", "static", "unbound"))
    if form == "diamond":
        w.emit(scope, f"{o} = Diamond({w.atom(scope)} * 0.5)")
        w.maybe_break(scope)
        w.put(scope, f"{o}.apply({w.atom(scope)})", 3.0)
        w.emit(scope, "print([c.__name__ for c in Diamond.__mro__])")
        w.features.add("comprehension")
    elif form == "classmethod":
        w.emit(scope, f"{o} = {w.pick(('Right', 'Diamond'))}.make({w.atom(scope)})")
        w.maybe_break(scope)
        w.put(scope, f"({o}.apply({o}.w) + {o}.w)", 12.0)
        w.emit(scope, f"print({o}.made, type({o}).__name__)")
    elif form == "static":
        w.emit(scope, f"{o} = Left.make({w.atom(scope)})")
        w.put(scope, f"({o}.shift({w.atom(scope)}) + Root.shift({o}.w))", 9.0)
        w.emit(scope, f"print(type({o}).__name__)")
    else:
        w.emit(scope, f"{o} = Left({w.atom(scope)})")
        w.maybe_break(scope)
        w.put(scope, f"(Root.apply({o}, {w.atom(scope)}) + super(Left, {o}).apply({o}.w))", 4.0)
        w.emit(scope, f"print(Left.apply.__qualname__, type({o}).__name__)")


@construct("exception-attrs", weight=2, compound=True, features={
    "exception-attrs": "an exception class with its own __init__, args and attributes, raised and caught",
})
def exception_attrs(w: StatementWriter, scope: Scope) -> None:
    """A custom exception carrying a tensor and a code, caught by its base class."""
    w.features.update({"exception-attrs", "try-except", "raise", "print"})
    w.need(_FAULT)
    cls = w.pick(("Fault", "Retry"))
    w.emit(scope, "try:")
    w.body(scope.block(catches=(), loop=False), (0, 1))
    w.maybe_break(scope, 1, 25)
    w.emit(scope, f"raise {cls}(n, {w.atom(scope)})", 1)
    w.emit(scope, "except Fault as e:" if cls == "Fault" else "except (KeyError, Fault, Retry) as e:")
    w.emit(scope, f"{w.target(scope)} = torch.tanh(e.w * e.code * 0.25)", 1)
    w.maybe_break(scope, 1, 25)
    w.emit(scope, "print(e.args, type(e).__name__, e.code)", 1)


@construct("dataclass-forms", weight=2, features={
    "dataclass-forms": "dataclasses frozen (its write caught), slots=True, __post_init__, default_factory, replace",
})
def dataclass_forms(w: StatementWriter, scope: Scope) -> None:
    """Frozen and slotted dataclasses built, replaced and compared."""
    w.features.update({"dataclass-forms", "print"})
    w.need(_DATACLASSES)
    d = w.fresh("dc")
    if w.chance(50):
        w.emit(scope, f"{d} = Frozen({w.atom(scope)}, k=n)")
        w.maybe_break(scope)
        w.emit(scope, f"{d} = dataclasses.replace({d}, k={d}.k + 1)")
        if w.chance(50):
            w.features.add("try-except")
            w.emit_block(scope, f"""
                try:
                    {d}.k = 0
                except dataclasses.FrozenInstanceError:
                    print("frozen")
            """)
        w.put(scope, f"({d}.w * {d}.k * 0.2)", 4.0)
        w.emit(scope, f"print({d}.k, [f.name for f in dataclasses.fields({d})])")
        w.features.add("comprehension")
    else:
        w.emit(scope, f"{d} = Slim({w.atom(scope)}, k={w.pick(scope.ints)})")
        w.emit(scope, f"{d}.seen.append(n)")
        w.maybe_break(scope)
        w.put(scope, f"({d}.w * {d}.scale)", 5.0)
        w.emit(scope, f"print({d}.seen, '__dict__' in dir({d}))")


@construct("enum", weight=2, features={
    "enum": "enum.Enum/IntEnum/Flag members: lookup by value and name, methods, iteration, flag arithmetic",
})
def enum_(w: StatementWriter, scope: Scope) -> None:
    """Enum members chosen from the program's ints drive a tensor computation."""
    w.features.update({"enum", "print"})
    w.need(_ENUM)
    m = w.fresh("mode")
    form = w.pick(("value", "name", "intenum", "flag"))
    if form == "value":
        w.emit(scope, f"{m} = Mode(n % 2 + 1)")
        w.maybe_break(scope)
        w.put(scope, f"{m}.apply({w.atom(scope)})", 4.5)
        w.emit(scope, f"print({m}.name, {m}.value, {m} is Mode.SHIFT)")
    elif form == "name":
        w.emit(scope, f'{m} = Mode["SCALE" if n > 2 else "SHIFT"]')
        w.put(scope, f"({w.atom(scope)} * {m}.value * 0.5)", 4.0)
        w.emit(scope, "print([member.name for member in Mode], len(Mode))")
        w.features.add("comprehension")
    elif form == "intenum":
        w.emit(scope, f"{m} = Level.HIGH if n >= Level.HIGH else Level.LOW")
        w.maybe_break(scope)
        w.put(scope, f"({w.atom(scope)} * ({m} + 1) * 0.2)", 4.0)
        w.emit(scope, f"print(int({m}), {m}.name, {m} > 2)")
    else:
        w.emit(scope, f"{m} = Perm.R | (Perm.W if n % 2 else Perm.X)")
        w.maybe_break(scope)
        w.put(scope, f"({w.atom(scope)} * (Perm.W in {m}) + {m}.value * 0.1)", 4.7)
        w.emit(scope, f"print(int({m}.value), Perm.X in {m})")


@construct("protocol-abc", weight=2, features={
    "protocol-abc": "isinstance against a runtime_checkable Protocol, an ABC with register, unions of them",
})
def protocol_abc(w: StatementWriter, scope: Scope) -> None:
    """Objects checked against a protocol, an ABC and unions before being used."""
    w.features.update({"protocol-abc", "print", "if"})
    w.need(_PROTOCOLS)
    o = w.fresh("op")
    w.emit(scope, f"{o} = {w.pick(('Neg()', 'Duck()'))}")
    check = w.pick((f"isinstance({o}, Applies)", f"isinstance({o}, Op)", f"isinstance({o}, Neg | Duck)",
                    f"issubclass(type({o}), (Op, int))"))
    w.emit(scope, f"if {check}:")
    w.put(scope, f"{o}.apply({w.atom(scope)})", 4.0, 1)
    w.maybe_break(scope, 1, 20)
    w.emit(scope, f"_flags = (isinstance({o}, Applies), isinstance({o}, Op), issubclass(Duck, Op))")
    w.emit(scope, "print(_flags)")
    if w.chance(40):
        w.put(scope, f"Neg().twice({w.atom(scope)})", 1.0)


@construct("bound-method", weight=2, features={
    "bound-method": "bound methods stored and called later, types.MethodType, __self__/__func__",
})
def bound_method(w: StatementWriter, scope: Scope) -> None:
    """A method bound before a graph break and called after it."""
    w.features.update({"bound-method", "print"})
    w.need(_SUPER)
    o, m = w.fresh("node"), w.fresh("meth")
    w.emit(scope, f"{o} = Left({w.atom(scope)} * 0.5)")
    if w.chance(50):
        w.emit(scope, f"{m} = {o}.apply")
        w.maybe_break(scope)
        w.put(scope, f"({m}({w.atom(scope)}) + {m}.__func__({o}, {w.atom(scope)}))", 2.0)
        w.emit(scope, f"print({m}.__self__ is {o}, {m}.__func__.__name__)")
    else:
        w.need(imported("types"))
        w.need(_MIX_METHOD)
        w.emit(scope, f"{m} = types.MethodType(weighted, {o})")
        w.maybe_break(scope)
        w.put(scope, f"{m}({w.atom(scope)})", 1.0)
        if w.chance(50):
            w.emit(scope, f"{o}.weighted = {m}")
            w.put(scope, f"{o}.weighted({w.atom(scope)})", 1.0)
        w.emit(scope, f"print({m}.__self__ is {o}, {m}.__name__)")


_MIX_METHOD = helper("weighted", '''
    def weighted(self, x):
        return torch.tanh(x * self.w)
''')


@construct("function-rebind", weight=2, features={
    "function-rebind": "a module function's __defaults__, __kwdefaults__ and __code__ rebound between calls",
})
def function_rebind(w: StatementWriter, scope: Scope) -> None:
    """A module function called, its defaults or code rebound, called again after a graph break."""
    w.features.update({"function-rebind", "print"})
    w.need(_KNOB)
    w.put(scope, f"knob({w.atom(scope)})", 1.0)
    form = w.pick(("defaults", "kwdefaults", "code"))
    if form == "defaults":
        w.emit(scope, f"knob.__defaults__ = ({w.pick(scope.ints)},)")
    elif form == "kwdefaults":
        w.emit(scope, f'knob.__kwdefaults__ = {{"s": {w.pick(("0.25", "0.75"))}}}')
    else:
        w.emit(scope, "knob.__code__ = other_knob.__code__ if knob.__code__ is KNOB_CODE else KNOB_CODE")
    w.maybe_break(scope, 0, 50)
    w.put(scope, f"knob({w.atom(scope)})", 1.0)
    w.emit(scope, "print(knob.__defaults__, sorted(knob.__kwdefaults__), knob.__code__ is KNOB_CODE)")
