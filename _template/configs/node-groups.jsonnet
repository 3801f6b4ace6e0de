// Node groups for EKS from the context values (std.extVar("context")).
local ctx = std.extVar('context');
local workers = std.get(std.get(ctx.cluster, 'workers', {}), 'count', 2);
{
  default: {
    min_size: 1,
    max_size: std.max(workers, 1) * 2,
    desired_size: workers,
    instance_types: ['t3.large'],
  },
}
