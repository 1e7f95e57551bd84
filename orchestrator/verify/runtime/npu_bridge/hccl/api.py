"""HCCL's topology, for one device."""


def get_rank_id(group="hccl_world_group"):
    return 0


def get_local_rank_id(group="hccl_world_group"):
    return 0


def get_rank_size(group="hccl_world_group"):
    return 1


def get_local_rank_size(group="hccl_world_group"):
    return 1
